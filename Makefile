# Sett — run `make help` for the targets.

SHELL := /bin/bash
GO    ?= go
BIN   := $(CURDIR)/bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/settdev/sett/internal/cli.Version=$(VERSION) -X github.com/settdev/sett/internal/cub.Version=$(VERSION)
export CGO_ENABLED := 0

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST) | sort

.PHONY: build
build: ## Build sett, sett-orchestrator, sett-cub, sett-worker, sett-read, the example agents, sett-agent-llm, sett-coder and sett-fake-llm into bin/
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett ./cmd/sett
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett-orchestrator ./cmd/orchestrator
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett-cub ./cmd/cub
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett-worker ./cmd/sett-worker
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett-read ./cmd/sett-read
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett-writer ./agents/writer
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett-reviewer ./agents/reviewer
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett-agent-llm ./agents/llm
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett-coder ./agents/coder
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sett-fake-llm ./cmd/sett-fake-llm

.PHONY: test-short
test-short: ## Unit tests only (need nothing running)
	$(GO) test -short -count=1 ./...

.PHONY: test-unit
test-unit: ## Unit and integration tests (need redis-server), without Docker (race detector: needs cgo)
	# -p 1: one package at a time. The integration, chaos and bench packages
	# each start many daemons and Redis servers; run side by side on two
	# cores under the race detector they starve each other past the tests'
	# deadlines (Sentinel failover, vault approvals).
	# internal/worker runs its workers as containers of sett-cub:local: it
	# runs with the e2e tests, after `make images` (mk/e2e.mk).
	CGO_ENABLED=1 $(GO) test -race -p 1 -count=1 -timeout 20m $$($(GO) list ./... | grep -v -e /e2e -e /internal/worker$$)

.PHONY: lint
lint: ## gofmt check and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

.PHONY: test
test: lint test-helm test-monitoring test-unit test-e2e ## The whole suite: lint, unit, integration (real redis-server), Helm chart (offline kubeconform), monitoring (promtool) and e2e (real Docker) tests

.PHONY: clean
clean: ## Remove build outputs
	rm -rf $(BIN)

-include mk/*.mk
