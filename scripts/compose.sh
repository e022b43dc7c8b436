#!/usr/bin/env bash
# Runs Docker Compose — the v2 plugin (`docker compose`) when it works, else
# Debian's docker-compose 1.29 (v1) — with the arguments given.
#
# `up --wait` waits until every service is healthy or running; v1 has no
# such flag, so for v1 it is dropped (v1's `up` already waits for the
# healthy dependencies that depends_on names before it starts a service).
set -euo pipefail

if docker compose version >/dev/null 2>&1; then
	exec docker compose "$@"
fi
if command -v docker-compose >/dev/null; then
	args=()
	for a in "$@"; do
		[[ $a == --wait ]] || args+=("$a")
	done
	exec docker-compose "${args[@]}"
fi
echo "compose: neither the Compose v2 plugin nor docker-compose is installed: run \`make compose-plugin\` (builds the plugin) or install docker-compose" >&2
exit 1
