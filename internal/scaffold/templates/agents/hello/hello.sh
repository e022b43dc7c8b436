#!/bin/sh
# hello — the smallest Sett agent tool.
#
# The cub runs this once per piece of work granted to the agent, in the
# workspace directory. It receives one JSON document on stdin (the claim, the
# target artefact, its context chain, the goal) and must print exactly one
# JSON object on stdout. Everything else — logs, progress — goes to stderr.
# A non-zero exit status turns into a Failure artefact with the tail of
# stderr. The cub runs the work again only as the agent's retry policy says
# (`retry` in sett.yml; by default 5 attempts in all, backing off from 1m);
# a retry reruns this script from the start.
set -eu

# Read the whole input. A real tool would parse it (jq, Python, Go ...).
input=$(cat)
printf 'hello: agent %s got %s bytes of input for claim %s\n' \
  "${SETT_AGENT:-?}" "${#input}" "${SETT_CLAIM_ID:-?}" >&2

# The one JSON object on stdout: the artefact to write.
printf '{"artefact_type": "Greeting", "artefact_payload": "Hello from %s! I read %s bytes of context.", "summary": "said hello"}\n' \
  "${SETT_AGENT:-hello}" "${#input}"
