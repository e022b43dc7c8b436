#!/usr/bin/env bash
# make demo: start a Sett instance on Docker with the example agents, post a
# goal that goes through the review, parallel and exclusive phases and the
# feedback loop, wait for the outcome, print the audit trail, and stop the
# instance again (always, also on failure or Ctrl-C).
#
# Needs Docker. Builds what is missing (make build images) — nothing is
# pulled. Environment:
#   SETT          the sett binary (default bin/sett)
#   DEMO_NAME     instance name (default sett-demo)
#   DEMO_GOAL     the goal (default: a /health endpoint; it must not mention
#                 tests, or the reviewer approves at once and there is no loop)
#   DEMO_KEEP=1   leave the instance running (stop it with the printed command)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SETT=${SETT:-$ROOT/bin/sett}
NAME=${DEMO_NAME:-sett-demo}
GOAL=${DEMO_GOAL:-Add a /health endpoint that reports the build version}
IMAGES=(sett-orchestrator:local sett-cub:local sett-example-writer:local sett-example-reviewer:local sett-redis:local)

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

command -v docker >/dev/null || die "Docker is needed: install it, or try the local runtime (bin/sett up --runtime local)"
docker info >/dev/null 2>&1 || die "the Docker daemon is not reachable (is it running, and may $(id -un) use it?)"

missing=0
[[ -x $SETT ]] || missing=1
for img in "${IMAGES[@]}"; do
	docker image inspect "$img" >/dev/null 2>&1 || missing=1
done
if ((missing)); then
	step "Building what is missing: make build images"
	make -C "$ROOT" build images
fi
"$SETT" up --help >/dev/null 2>&1 || die "$SETT has no 'up' command yet"

# A fresh workspace holding only the demo's sett.yml.
WS=$(mktemp -d "${TMPDIR:-/tmp}/sett-demo.XXXXXX")
cp "$ROOT/images/demo/sett.yml" "$WS/sett.yml"
chmod 0644 "$WS/sett.yml"
# The agents run as the workspace owner, or as 65532 when that is root:
# then the rw agent (coder) needs the workspace opened up.
if [[ $(id -u) == 0 ]]; then chmod 0777 "$WS"; else chmod 0755 "$WS"; fi
cd "$WS"

cleanup() {
	local rc=$?
	trap - EXIT HUP INT TERM
	trap '' PIPE
	# Whatever happened, stop the instance: no early exit from here on, and
	# the output may be gone (a closed pipe).
	set +e
	cd "$WS"
	if [[ ${DEMO_KEEP:-} == 1 ]]; then
		step "Leaving instance $NAME running: stop it with (cd $WS && $SETT down --name $NAME --purge)"
		exit "$rc"
	fi
	step "Stopping instance $NAME"
	"$SETT" down --name "$NAME" --purge || echo "demo: could not stop $NAME: try (cd $WS && $SETT down --name $NAME --purge)" >&2
	cd /
	rm -rf "$WS"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 141' PIPE

step "Starting instance $NAME on Docker (workspace $WS)"
"$SETT" up --name "$NAME" --runtime docker

step "Posting the goal: $GOAL"
OUT=$WS/forage.out
set +e
"$SETT" --name "$NAME" forage --goal "$GOAL" --wait --timeout 5m | tee "$OUT"
rc=${PIPESTATUS[0]}
set -e
# The goal's id is the workflow id: "workflow <uuid>" when posted, or
# "Workflow <short id> completed" at the end.
WF=$(grep -m1 -oE '^workflow +[0-9a-f-]{36}' "$OUT" | awk '{print $2}' || true)
[[ -n $WF ]] || WF=$(grep -m1 -oE 'Workflow [0-9a-f-]{4,}' "$OUT" | awk '{print $2}' || true)
[[ -n $WF ]] || die "could not find the workflow id in the output of sett forage"

step "The audit trail of workflow $WF"
"$SETT" --name "$NAME" hoard --workflow "$WF" -o tree
echo
"$SETT" --name "$NAME" hoard --workflow "$WF" --limit 100

if ((rc != 0)); then
	die "the workflow did not complete (sett forage exited $rc)"
fi
step "Done: the reviewer rejected the first plan for not mentioning tests, the planner revised it, and the revision went through review, the auditor (parallel) and the coder (exclusive)"
