#!/usr/bin/env bash
# Runs Docker Compose — the v2 plugin (`docker compose`) when it is
# installed, else docker-compose (v1) — with the arguments given, in the
# directory of docker-compose.yml (where .env is). Installs nothing.
#
# `up --wait` waits until every service is healthy; v1 has no such flag,
# so for v1 it is dropped and this script polls the containers' health
# instead (up to SETT_COMPOSE_WAIT seconds, default 180).
set -euo pipefail
cd "$(dirname "$0")/.."

if docker compose version >/dev/null 2>&1; then
	exec docker compose "$@"
fi
if ! command -v docker-compose >/dev/null; then
	echo "compose: neither the Compose v2 plugin (docker compose) nor docker-compose (v1) is installed: install one (Debian: apt-get install docker-compose)" >&2
	exit 1
fi
args=()
wait=
for a in "$@"; do
	if [[ $a == --wait ]]; then wait=1; else args+=("$a"); fi
done
docker-compose "${args[@]}"
[[ -n $wait ]] || exit 0

deadline=$((SECONDS + ${SETT_COMPOSE_WAIT:-180}))
while :; do
	pending=()
	for id in $(docker-compose ps -q); do
		state=$(docker inspect -f '{{.Name}} {{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id")
		case ${state##* } in
		healthy | running) ;;
		*) pending+=("$state") ;;
		esac
	done
	((${#pending[@]} == 0)) && exit 0
	if ((SECONDS >= deadline)); then
		echo "compose: not healthy after ${SETT_COMPOSE_WAIT:-180}s: ${pending[*]} (docker-compose logs SERVICE says why)" >&2
		exit 1
	fi
	sleep 2
done
