# Chaos campaign (chaos/, issue 14). Included by the Makefile.

CHAOS_WORKFLOWS ?= 500
CHAOS_FAULTS    ?= 50
CHAOS_SEED      ?= 1

.PHONY: chaos
chaos: ## Seeded fault campaign on real daemons + redis-server + toxiproxy (CHAOS_WORKFLOWS, CHAOS_FAULTS, CHAOS_SEED); prints the invariants table
	CHAOS_WORKFLOWS=$(CHAOS_WORKFLOWS) CHAOS_FAULTS=$(CHAOS_FAULTS) CHAOS_SEED=$(CHAOS_SEED) $(GO) run ./chaos/cmd/sett-chaos

.PHONY: chaos-smoke
chaos-smoke: ## A short seeded campaign (20 workflows, 5 faults, under 2 minutes), as `make test` runs it
	$(GO) test -count=1 -run '^TestSmoke$$' -v ./chaos/
