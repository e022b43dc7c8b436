# Chaos campaign (chaos/, issue 14). Included by the Makefile.

CHAOS_WORKFLOWS ?= 500
CHAOS_FAULTS    ?= 50
CHAOS_SEED      ?= 1
CHAOS_ROLLBACK  ?= 0

.PHONY: chaos
chaos: ## Seeded fault campaign on real daemons + redis-server + toxiproxy (CHAOS_WORKFLOWS, CHAOS_FAULTS, CHAOS_SEED; CHAOS_ROLLBACK=1 adds AOF tail cuts); prints the invariants table
	CHAOS_WORKFLOWS=$(CHAOS_WORKFLOWS) CHAOS_FAULTS=$(CHAOS_FAULTS) CHAOS_SEED=$(CHAOS_SEED) CHAOS_ROLLBACK=$(CHAOS_ROLLBACK) $(GO) run ./chaos/cmd/sett-chaos

.PHONY: chaos-smoke
chaos-smoke: ## A short seeded campaign (20 workflows, 5 faults, under 2 minutes), as `make test` runs it
	$(GO) test -count=1 -run '^TestSmoke$$' -v ./chaos/
