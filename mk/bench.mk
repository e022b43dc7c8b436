# Performance harness (bench/). Included by the Makefile.

BENCH_RESULTS ?= bench/results
BENCH_FLAGS   ?=

.PHONY: bench
bench: ## Measure the performance targets on real daemons + redis-server: one table; JSON and benchstat lines in bench/results/
	$(GO) run ./bench/cmd/sett-bench -results $(BENCH_RESULTS) $(BENCH_FLAGS)

.PHONY: bench-smoke
bench-smoke: ## The bench harness with tiny sample counts (seconds), as `make test` runs it
	$(GO) test -count=1 -run '^TestSmoke$$' -v ./bench/

.PHONY: bench-asynq
bench-asynq: ## asynq side by side only (bench/asynq, a module of its own: asynq never enters go.mod); `make bench` runs it too
	$(GO) run ./bench/cmd/sett-bench -only asynq $(BENCH_FLAGS)
