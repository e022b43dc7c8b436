# make demo: one goal through every phase and the feedback loop, on Docker.

.PHONY: demo
demo: build images ## Start an instance on Docker, run a goal through review, parallel and exclusive phases and a feedback loop, print its audit trail, stop
	SETT='$(BIN)/sett' scripts/demo.sh

.PHONY: demo-llm
demo-llm: build ## The coding template end to end on this host against sett-fake-llm (or OPENAI_BASE_URL / ANTHROPIC_API_KEY), approving the plan from the CLI
	SETT='$(BIN)/sett' scripts/demo-llm.sh
