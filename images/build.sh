#!/usr/bin/env bash
# Builds the Sett images without pulling anything: every image starts FROM
# scratch (or from sett-cub:local) and holds static binaries.
#
#   sett-orchestrator:local        the orchestrator on scratch
#   sett-console:local             the sett CLI on scratch, serving `sett ui` (compose profile "console")
#   sett-cub:local                 the cub + the worker launcher (sett-worker, for agents in
#                                  mode: controller) + a static busybox shell: base of agent images
#   sett-example-writer:local      sett-cub:local + agents/writer
#   sett-example-reviewer:local    sett-cub:local + agents/reviewer
#   sett-agent-llm:local           sett-cub:local + agents/llm + the host's CA bundle
#   sett-fake-llm:local            the fake model provider (cmd/sett-fake-llm) on scratch
#   sett-agent-coder:local         agents/coder + the cub on CODER_BASE_IMAGE (an image
#                                  with git and the coding CLI); skipped with a notice
#                                  when that image is not present
#   sett-redis:local               the host's redis-server and redis-cli with their
#                                  libraries (only when the image is missing and
#                                  cannot be pulled)
#
# Usage: images/build.sh [orchestrator|cub|agents|llm|fakellm|coder|redis ...]   (default: all)
#
# Environment:
#   SETT_BIN          directory holding sett-orchestrator, sett-cub, sett-worker, sett-writer,
#                     sett-reviewer, sett-agent-llm, sett-fake-llm and sett-coder built
#                     with CGO_ENABLED=0 (make passes bin/); empty: build them into a
#                     temporary directory
#   CODER_BASE_IMAGE  the image sett-agent-coder:local is built on (default
#                     sett-coder-base:local; images/coder-base/Dockerfile makes one
#                     where a registry is reachable)
#   SETT_CA_BUNDLE    the CA bundle copied into sett-agent-llm:local (default: the
#                     host's /etc/ssl/certs/ca-certificates.crt)
#   SETT_REDIS_IMAGE  the Redis image to provide (default sett-redis:local)
#   SETT_REDIS_REBUILD=1  rebuild the local Redis image even when it exists
#   SETT_BUSYBOX      a static busybox to put into sett-cub:local; "none": no shell;
#                     default: the host's if it is static, else Debian's
#                     busybox-static package (apt-get download, nothing installed)
#   VERSION, LDFLAGS  passed by make (image label and go build -ldflags)
#
# Each build context is a fresh temporary directory holding only what the
# image needs, so nothing of the repository is sent to the daemon.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-go}
VERSION=${VERSION:-dev}
LDFLAGS=${LDFLAGS:--s -w}
REDIS_IMAGE=${SETT_REDIS_IMAGE:-sett-redis:local}
NONROOT_UID=65532
REDIS_UID=999

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'images: %s\n' "$*" >&2; exit 1; }

command -v docker >/dev/null || die "the docker CLI is not installed"
docker info >/dev/null 2>&1 || die "the Docker daemon is not reachable (is it running, and may $(id -un) use it?)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sett-images.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# build_image NAME CONTEXT [DOCKER BUILD ARGS...]: builds CONTEXT/Dockerfile
# as NAME, and removes the image NAME named before when nothing else uses
# it (no pile of dangling images after each rebuild).
build_image() {
	local name=$1 ctx=$2 old new
	shift 2
	old=$(docker image inspect --format '{{.Id}}' "$name" 2>/dev/null || true)
	log "building $name ($(du -sh "$ctx" | cut -f1) context)"
	# The legacy builder prints a deprecation notice on hosts without
	# buildx; both builders read these Dockerfiles the same way.
	docker build --quiet "$@" --label "org.opencontainers.image.version=$VERSION" \
		--label "org.opencontainers.image.source=https://github.com/settdev/sett" \
		-t "$name" "$ctx" >/dev/null 2> >(grep -v -e 'DEPRECATED: The legacy builder' -e 'Install the buildx component' \
			-e 'https://docs.docker.com/go/buildx' -e '^ *$' >&2 || true)
	new=$(docker image inspect --format '{{.Id}}' "$name")
	if [[ -n $old && $old != "$new" ]]; then
		docker image rm "$old" >/dev/null 2>&1 || true
	fi
}

# binary NAME PKG: prints the path of a static binary, building it unless
# SETT_BIN has it.
binary() {
	local name=$1 pkg=$2
	if [[ -n ${SETT_BIN:-} && -x $SETT_BIN/$name ]]; then
		echo "$SETT_BIN/$name"
		return
	fi
	mkdir -p "$TMP/bin"
	if [[ ! -x $TMP/bin/$name ]]; then
		log "go build $pkg"
		(cd "$ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$LDFLAGS" -o "$TMP/bin/$name" "$pkg")
	fi
	echo "$TMP/bin/$name"
}

# etc_files DIR: /etc/passwd and /etc/group with root and nonroot (and
# redis for the Redis image).
etc_files() {
	local dir=$1/etc
	mkdir -p "$dir"
	cat >"$dir/passwd" <<EOF
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:$NONROOT_UID:$NONROOT_UID:nonroot:/tmp:/sbin/nologin
redis:x:$REDIS_UID:$REDIS_UID:redis:/data:/sbin/nologin
EOF
	cat >"$dir/group" <<EOF
root:x:0:
nonroot:x:$NONROOT_UID:
redis:x:$REDIS_UID:
EOF
	chmod 0644 "$dir/passwd" "$dir/group"
}

is_static() { [[ -f $1 ]] && ! ldd "$1" >/dev/null 2>&1; }

# find_busybox: prints a static busybox, or nothing.
find_busybox() {
	if [[ -n ${SETT_BUSYBOX:-} ]]; then
		[[ $SETT_BUSYBOX == none ]] && return
		is_static "$SETT_BUSYBOX" || die "SETT_BUSYBOX=$SETT_BUSYBOX is not a static executable"
		echo "$SETT_BUSYBOX"
		return
	fi
	local b
	for b in /bin/busybox /usr/bin/busybox; do
		if is_static "$b"; then
			echo "$b"
			return
		fi
	done
	# Debian's busybox-static, unpacked without installing it.
	if command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; then
		mkdir -p "$TMP/deb"
		if (cd "$TMP/deb" && apt-get download busybox-static >/dev/null 2>&1) ||
			{ [[ $(id -u) == 0 ]] && apt-get update -qq >/dev/null 2>&1 && (cd "$TMP/deb" && apt-get download busybox-static >/dev/null 2>&1); }; then
			dpkg-deb -x "$TMP"/deb/busybox-static_*.deb "$TMP/deb/root"
			for b in "$TMP/deb/root/bin/busybox" "$TMP/deb/root/usr/bin/busybox"; do
				if is_static "$b"; then
					echo "$b"
					return
				fi
			done
		fi
	fi
}

build_orchestrator() {
	local ctx=$TMP/orchestrator
	mkdir -p "$ctx/rootfs"
	etc_files "$ctx/rootfs"
	cp "$(binary sett-orchestrator ./cmd/orchestrator)" "$ctx/sett-orchestrator"
	cp "$ROOT/images/orchestrator/Dockerfile" "$ctx/Dockerfile"
	build_image sett-orchestrator:local "$ctx"
}

build_console() {
	local ctx=$TMP/console
	mkdir -p "$ctx/rootfs/tmp"
	chmod 1777 "$ctx/rootfs/tmp"
	etc_files "$ctx/rootfs"
	cp "$(binary sett ./cmd/sett)" "$ctx/sett"
	cp "$ROOT/images/console/Dockerfile" "$ctx/Dockerfile"
	build_image sett-console:local "$ctx"
}

build_cub() {
	local ctx=$TMP/cub bb
	mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/usr/bin" "$ctx/rootfs/workspace" "$ctx/rootfs/etc/sett" "$ctx/rootfs/tmp"
	chmod 1777 "$ctx/rootfs/tmp"
	chmod 0755 "$ctx/rootfs/workspace"
	etc_files "$ctx/rootfs"
	bb=$(find_busybox)
	if [[ -n $bb ]]; then
		cp "$bb" "$ctx/rootfs/bin/busybox"
		chmod 0755 "$ctx/rootfs/bin/busybox"
		local applet
		for applet in $("$bb" --list); do
			[[ $applet == busybox ]] || ln -s busybox "$ctx/rootfs/bin/$applet"
		done
		# Scripts often start with #!/usr/bin/env sh.
		ln -s ../../bin/env "$ctx/rootfs/usr/bin/env"
		log "sett-cub:local gets a shell: $("$bb" | head -n1)"
	else
		log "WARNING: no static busybox found (install busybox-static or set SETT_BUSYBOX): sett-cub:local has no shell"
	fi
	cp "$(binary sett-cub ./cmd/cub)" "$ctx/sett-cub"
	# The launcher of controller agents: its own binary, so that the cub
	# never links the Docker SDK (it only runs in controller containers).
	cp "$(binary sett-worker ./cmd/sett-worker)" "$ctx/sett-worker"
	# What a tool runs to fetch a section left out of its input
	# (SETT_READ_SOCKET): in every agent image built on this one.
	cp "$(binary sett-read ./cmd/sett-read)" "$ctx/sett-read"
	cp "$ROOT/images/cub/Dockerfile" "$ctx/Dockerfile"
	build_image sett-cub:local "$ctx"
}

build_agents() {
	docker image inspect sett-cub:local >/dev/null 2>&1 || build_cub
	local agent ctx
	for agent in writer reviewer; do
		ctx=$TMP/agent-$agent
		mkdir -p "$ctx"
		cp "$(binary "sett-$agent" "./agents/$agent")" "$ctx/sett-$agent"
		cp "$ROOT/agents/$agent/Dockerfile" "$ctx/Dockerfile"
		build_image "sett-example-$agent:local" "$ctx"
	done
}

build_llm() {
	docker image inspect sett-cub:local >/dev/null 2>&1 || build_cub
	local ctx=$TMP/llm ca=${SETT_CA_BUNDLE:-}
	mkdir -p "$ctx"
	if [[ -z $ca ]]; then
		for ca in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem ""; do
			[[ -z $ca || -s $ca ]] && break
		done
	fi
	if [[ -n $ca ]]; then
		cp -L "$ca" "$ctx/ca-certificates.crt"
	else
		# Local providers (Ollama, the fake server) speak plain HTTP.
		log "WARNING: no CA bundle found (install ca-certificates or set SETT_CA_BUNDLE): sett-agent-llm:local cannot verify HTTPS providers"
		: >"$ctx/ca-certificates.crt"
	fi
	cp "$(binary sett-agent-llm ./agents/llm)" "$ctx/sett-agent-llm"
	cp "$ROOT/agents/llm/Dockerfile" "$ctx/Dockerfile"
	build_image sett-agent-llm:local "$ctx"
}

build_fakellm() {
	local ctx=$TMP/fakellm
	mkdir -p "$ctx/rootfs"
	etc_files "$ctx/rootfs"
	cp "$(binary sett-fake-llm ./cmd/sett-fake-llm)" "$ctx/sett-fake-llm"
	cp "$ROOT/images/fakellm/Dockerfile" "$ctx/Dockerfile"
	build_image sett-fake-llm:local "$ctx"
}

# build_coder: sett-agent-coder:local needs an image with git and the coding
# CLI, which cannot be pulled here; without it the image is skipped (not an
# error: make images must work offline).
build_coder() {
	local base=${CODER_BASE_IMAGE:-sett-coder-base:local} ctx=$TMP/coder
	if ! docker image inspect "$base" >/dev/null 2>&1; then
		log "skipping sett-agent-coder:local: its base $base (git + a coding CLI) is not present; see images/README.md"
		return
	fi
	docker image inspect sett-cub:local >/dev/null 2>&1 || build_cub
	mkdir -p "$ctx"
	cp "$(binary sett-coder ./agents/coder)" "$ctx/sett-coder"
	cp "$ROOT/agents/coder/Dockerfile" "$ctx/Dockerfile"
	log "sett-agent-coder:local is built on $base"
	build_image sett-agent-coder:local "$ctx" --build-arg "CODER_BASE_IMAGE=$base"
}

# find_redis: prints the host's redis-server binary, installing Debian's
# redis-tools (the binary without the service) when it is missing.
find_redis() {
	local b
	for b in redis-server redis-check-rdb; do
		if command -v "$b" >/dev/null && command -v redis-cli >/dev/null; then
			command -v "$b"
			return
		fi
	done
	if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
		log "installing Debian's redis-tools (redis-server and redis-cli)"
		{ apt-get install -y --no-install-recommends redis-tools || { apt-get update && apt-get install -y --no-install-recommends redis-tools; }; } >&2
		command -v redis-check-rdb && return
	fi
	die "$REDIS_IMAGE is missing and cannot be pulled, and no redis-server is installed to build it from: install redis-server (Debian: apt-get install redis-tools), or set services.redis.image to an image you have"
}

build_redis() {
	if [[ ${SETT_REDIS_REBUILD:-} != 1 ]] && docker image inspect "$REDIS_IMAGE" >/dev/null 2>&1; then
		log "$REDIS_IMAGE is present (SETT_REDIS_REBUILD=1 rebuilds it)"
		return
	fi
	if [[ ${SETT_REDIS_REBUILD:-} != 1 && $REDIS_IMAGE != *:local ]] && docker pull -q "$REDIS_IMAGE" >/dev/null 2>&1; then
		log "pulled $REDIS_IMAGE"
		return
	fi
	local server cli ctx=$TMP/redis lib
	server=$(find_redis)
	cli=$(command -v redis-cli)
	mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/tmp" "$ctx/data"
	chmod 1777 "$ctx/rootfs/tmp"
	etc_files "$ctx/rootfs"
	# Redis picks its mode from argv[0]: the file must be named redis-server.
	cp -L "$server" "$ctx/rootfs/usr/local/bin/redis-server"
	cp -L "$cli" "$ctx/rootfs/usr/local/bin/redis-cli"
	# The libraries both link, and the loader, at the paths the binaries
	# look for them.
	for lib in $({ ldd "$server" || true; ldd "$cli" || true; } 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u); do
		mkdir -p "$ctx/rootfs$(dirname "$lib")"
		cp -L "$lib" "$ctx/rootfs$lib"
	done
	cp "$ROOT/images/redis/Dockerfile" "$ctx/Dockerfile"
	log "$REDIS_IMAGE from $("$server" --version | cut -d' ' -f1-3)"
	build_image "$REDIS_IMAGE" "$ctx"
	docker run --rm --entrypoint redis-server "$REDIS_IMAGE" --version >/dev/null ||
		die "the built $REDIS_IMAGE does not run (a library is missing?)"
}

targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(orchestrator console cub agents llm fakellm coder redis)
for t in "${targets[@]}"; do
	case $t in
	orchestrator) build_orchestrator ;;
	console) build_console ;;
	cub) build_cub ;;
	agents) build_agents ;;
	llm) build_llm ;;
	fakellm) build_fakellm ;;
	coder) build_coder ;;
	redis) build_redis ;;
	*) die "unknown image set $t (orchestrator, console, cub, agents, llm, fakellm, coder, redis)" ;;
	esac
done
# A rebuilt base leaves its predecessor untagged once the images on it are
# rebuilt too: drop such leftovers of these builds (dangling only).
docker image prune -f --filter "label=org.opencontainers.image.source=https://github.com/settdev/sett" >/dev/null 2>&1 || true
log "done: $(docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^sett-' | sort | tr '\n' ' ')"
