#!/usr/bin/env bash
# Installs the Docker Compose v2 plugin unless `docker compose` already
# works: builds the pinned version from source with the Go toolchain (the
# Go module proxy serves it; no image or binary download) into
# ~/.docker/cli-plugins/docker-compose. Takes a few minutes the first time.
#
# Usage: scripts/compose-plugin.sh [VERSION]   (default v2.40.3)
#
# `go install ...@version` refuses the module (its go.mod has exclude
# directives), so the module is downloaded and built in a copy of it (the
# module cache is read-only).
set -euo pipefail

VERSION=${1:-v2.40.3}
GO=${GO:-go}
MODULE=github.com/docker/compose/v2
DEST=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins/docker-compose

if docker compose version >/dev/null 2>&1; then
	echo "docker compose is available: $(docker compose version)"
	exit 0
fi
command -v "$GO" >/dev/null || { echo "compose-plugin: Go is needed to build the Compose plugin" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sett-compose.XXXXXX")
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
cd "$TMP"
echo "==> downloading $MODULE@$VERSION from the Go module proxy" >&2
dir=$(GOFLAGS=-mod=mod "$GO" mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -n $dir && -d $dir ]] || { echo "compose-plugin: could not download $MODULE@$VERSION" >&2; exit 1; }
cp -r "$dir" src
chmod -R u+w src
echo "==> building the plugin (a few minutes the first time)" >&2
(cd src && CGO_ENABLED=0 "$GO" build -trimpath \
	-ldflags "-s -w -X $MODULE/internal.Version=$VERSION" -o "$TMP/docker-compose" ./cmd)
mkdir -p "$(dirname "$DEST")"
install -m 0755 "$TMP/docker-compose" "$DEST"
docker compose version
