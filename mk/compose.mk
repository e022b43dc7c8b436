# Docker Compose: the stack of docker-compose.yml (docs/operations.md,
# "Docker Compose"). Works with the Compose v2 plugin where it is installed
# and with docker-compose (v1); installs nothing into your Docker
# configuration.

COMPOSE := scripts/compose.sh

# .env: a project name unique to this checkout, the Redis password (mode
# 0600), a free Redis port and the workspace (./workspace), written once by
# `sett init --compose`.
.env:
	@$(MAKE) --no-print-directory $(BIN)/sett
	$(BIN)/sett init --compose

$(BIN)/sett:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/sett ./cmd/sett

.PHONY: compose-env
compose-env: .env ## Write .env for docker-compose.yml (project name, Redis password and port, workspace) unless it exists

.PHONY: compose-up
compose-up: images .env ## Start docker-compose.yml (Redis, example agents, orchestrator) and wait until every service is healthy
	$(COMPOSE) up -d --wait
	$(BIN)/sett status

.PHONY: compose-down
compose-down: ## Stop the compose stack (keeps the Redis volume; PURGE=1 deletes it)
	$(COMPOSE) down $(if $(PURGE),--volumes)
