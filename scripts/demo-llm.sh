#!/usr/bin/env bash
# make demo-llm: the coding template's pipeline end to end, as processes on
# this host (the local runtime): `sett init --template coding`, a goal, the
# planner's plan approved from the CLI in the middle (every version of it:
# the reviewer sends the first one back), the coder's commit on the branch
# sett/<workflow>, the reviewer's verdict — then the audit trail, and the
# instance stopped again (always, also on failure or Ctrl-C).
#
# The model is sett-fake-llm (deterministic answers) unless a real provider
# is configured: OPENAI_BASE_URL (with OPENAI_API_KEY and LLM_MODEL) or
# ANTHROPIC_API_KEY (with LLM_MODEL). The coder runs a stand-in for Claude
# Code that writes health.go, unless CODER_CLI names a real coding CLI (for
# example `claude`) and ANTHROPIC_API_KEY is set.
#
# Needs redis-server. Builds bin/ when it is missing. Environment:
#   SETT          the sett binary (default bin/sett)
#   DEMO_NAME     instance name (default sett-demo-llm)
#   DEMO_GOAL     the goal (default: a /health endpoint)
#   DEMO_KEEP=1   leave the instance and its workspace (stop with the printed command)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/bin
SETT=${SETT:-$BIN/sett}
NAME=${DEMO_NAME:-sett-demo-llm}
GOAL=${DEMO_GOAL:-Add a /health endpoint that answers 200}

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
die() { printf 'demo-llm: %s\n' "$*" >&2; exit 1; }

command -v redis-server >/dev/null || die "redis-server is needed for the local runtime: install it (apt-get install redis-server)"
command -v git >/dev/null || die "git is needed: the coder commits on a branch of the workspace"
for b in sett sett-orchestrator sett-cub sett-agent-llm sett-coder sett-fake-llm; do
	[[ -x $BIN/$b ]] || { step "Building: make build"; make -C "$ROOT" build; break; }
done
export PATH=$BIN:$PATH

WS=$(mktemp -d "${TMPDIR:-/tmp}/sett-demo-llm.XXXXXX")
# Scratch files stay out of the workspace: forage refuses a dirty tree.
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/sett-demo-llm-scratch.XXXXXX")
FAKE_PID=""
FORAGE_PID=""
cleanup() {
	local rc=$?
	trap - EXIT HUP INT TERM
	trap '' PIPE
	set +e
	[[ -n $FORAGE_PID ]] && kill "$FORAGE_PID" 2>/dev/null
	if [[ ${DEMO_KEEP:-} == 1 ]]; then
		step "Leaving instance $NAME running: stop it with (cd $WS && $SETT down --name $NAME --purge; kill $FAKE_PID)"
		exit "$rc"
	fi
	step "Stopping instance $NAME"
	(cd "$WS" && "$SETT" down --name "$NAME" --purge) || echo "demo-llm: could not stop $NAME: try (cd $WS && $SETT down --name $NAME --purge)" >&2
	[[ -n $FAKE_PID ]] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
	rm -rf "$WS" "$SCRATCH"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 141' PIPE
cd "$WS"

step "sett init --template coding (workspace $WS)"
git init -q -b main
"$SETT" init --template coding

# The provider: a real one from the environment, else the fake one.
provider=openai base_url="" api_key="" model=${LLM_MODEL:-gpt-4o-mini}
if [[ -n ${OPENAI_BASE_URL:-} ]]; then
	base_url=$OPENAI_BASE_URL api_key=${OPENAI_API_KEY:-}
	step "Model: $model at $base_url"
elif [[ -n ${ANTHROPIC_API_KEY:-} && -z ${CODER_CLI:-} ]]; then
	provider=anthropic api_key=$ANTHROPIC_API_KEY model=${LLM_MODEL:-claude-3-5-haiku-latest}
	step "Model: $model (Anthropic)"
else
	step "Model: sett-fake-llm (deterministic answers; set OPENAI_BASE_URL or ANTHROPIC_API_KEY for a real one)"
	sett-fake-llm --addr 127.0.0.1:0 --addr-file "$SCRATCH/fake-addr" --quiet 2>"$SCRATCH/fake.log" &
	FAKE_PID=$!
	for _ in $(seq 100); do [[ -s $SCRATCH/fake-addr ]] && break; sleep 0.1; done
	[[ -s $SCRATCH/fake-addr ]] || die "sett-fake-llm did not start: $(cat "$SCRATCH/fake.log")"
	base_url="http://$(cat "$SCRATCH/fake-addr")/v1" api_key=sk-demo-fake
fi

# The coder: a stand-in for Claude Code unless CODER_CLI names a real CLI.
coder_cmd='["sett-coder"]'
if [[ -z ${CODER_CLI:-} ]]; then
	cat >"$SCRATCH/claude-stand-in.sh" <<'STANDIN'
#!/bin/sh
# A stand-in for Claude Code: reads the prompt, writes the handler, answers
# as `claude -p --output-format json` does.
cat >/dev/null
printf 'package main\n\nimport "net/http"\n\n// health answers 200.\nfunc health(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }\n' > health.go
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Added health.go.","usage":{"input_tokens":900,"output_tokens":120}}'
STANDIN
	chmod 0755 "$SCRATCH/claude-stand-in.sh"
	coder_cmd="[\"sett-coder\", \"--\", \"$SCRATCH/claude-stand-in.sh\"]"
else
	coder_cmd="[\"sett-coder\", \"--\", \"$CODER_CLI\"]"
fi

# Fill in the template's provider settings (sett.yml keeps them in one
# YAML anchor shared by the LLM agents).
sed -i \
	-e "s|^instance: \"\"|instance: \"$NAME\"|" \
	-e "s|LLM_PROVIDER: openai|LLM_PROVIDER: $provider|" \
	-e "s|LLM_MODEL: gpt-4o-mini|LLM_MODEL: \"$model\"|" \
	-e "s|OPENAI_BASE_URL: \"\"|OPENAI_BASE_URL: \"$base_url\"|" \
	-e "s|OPENAI_API_KEY: \"\"|OPENAI_API_KEY: \"$api_key\"|" \
	-e "s|command: \[\"sett-coder\"\]|command: $coder_cmd|" \
	-e "s|ANTHROPIC_API_KEY: \"\"|ANTHROPIC_API_KEY: \"${ANTHROPIC_API_KEY:-sk-ant-demo-stand-in}\"|" \
	sett.yml
if [[ $provider == anthropic ]]; then
	# The LLM agents read ANTHROPIC_API_KEY from their environment block.
	sed -i -e "s|      LLM_PROVIDER: anthropic|      LLM_PROVIDER: anthropic\n      ANTHROPIC_API_KEY: \"$api_key\"|" sett.yml
fi
git add sett.yml agents .gitignore
git -c user.name=Demo -c user.email=demo@example.com commit -q -m "sett init --template coding"

step "Starting instance $NAME (local runtime)"
"$SETT" up --name "$NAME" --runtime local

step "Posting the goal: $GOAL"
"$SETT" --name "$NAME" forage --goal "$GOAL" --wait --timeout 10m >"$SCRATCH/forage.out" 2>&1 &
FORAGE_PID=$!

# The human in the middle: approve each plan as it waits for a decision
# (the reviewer sends the first version back, so there are two).
approved=""
while kill -0 "$FORAGE_PID" 2>/dev/null; do
	for id in $("$SETT" --name "$NAME" approvals -o json | grep -o '"artefact_id": *"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/'); do
		case " $approved " in *" $id "*) continue ;; esac
		step "A plan waits for you: sett approve ${id:0:8}"
		"$SETT" --name "$NAME" hoard "$id" | sed -n '1,40p'
		"$SETT" --name "$NAME" approve "$id" --by demo
		approved="$approved $id"
	done
	sleep 1
done
set +e
wait "$FORAGE_PID"
rc=$?
FORAGE_PID=""
set -e
cat "$SCRATCH/forage.out"
WF=$(grep -o '^workflow  *[0-9a-f-]*' "$SCRATCH/forage.out" | awk '{print $2}')

step "Audit trail: sett hoard --workflow ${WF:0:8} -o tree"
"$SETT" --name "$NAME" hoard --workflow "$WF" -o tree || true
step "The coder's branch"
git log --oneline --all -n 5 || true
step "Tokens and scores: sett status"
"$SETT" --name "$NAME" status || true
((rc == 0)) || die "the workflow did not complete (exit $rc): see the trail above"
step "Done: the plan was approved by you, reviewed, implemented and the commit reviewed"
