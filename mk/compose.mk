# docker compose: the stack of docker-compose.yml (images/README.md).

COMPOSE_VERSION ?= v2.40.3
COMPOSE_PROJECT ?= sett
# The env file holds the Redis password: it lives in the user's state home,
# outside the directory the agents mount at /workspace.
SETT_STATE_HOME ?= $(or $(XDG_STATE_HOME),$(HOME)/.local/state)/sett
COMPOSE_ENV     ?= $(SETT_STATE_HOME)/compose/$(COMPOSE_PROJECT).env
COMPOSE         := scripts/compose.sh -p $(COMPOSE_PROJECT) --env-file $(COMPOSE_ENV)

.PHONY: compose-plugin
compose-plugin: ## Build the Docker Compose v2 plugin (COMPOSE_VERSION) unless `docker compose` works
	GO='$(GO)' scripts/compose-plugin.sh $(COMPOSE_VERSION)

# The stack's Redis password (generated once, mode 0600) and the user the
# daemons run as (yours, or 65532 instead of root).
# An env file an earlier version wrote into the workspace (.sett/compose.env)
# is moved out rather than regenerated: the Redis volume keeps its password.
$(COMPOSE_ENV):
	@umask 077; mkdir -p $(dir $@); chmod 700 $(SETT_STATE_HOME) $(dir $@)
	@if [ -f .sett/compose.env ]; then mv .sett/compose.env $@ && echo "moved .sett/compose.env to $@ (out of the workspace the agents mount)"; exit 0; fi; \
	umask 077; u=$$(id -u); g=$$(id -g); if [ "$$u" = 0 ]; then u=65532; g=65532; fi; \
	{ echo "SETT_REDIS_PASSWORD=$$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"; \
	  echo "SETT_UID=$$u"; echo "SETT_GID=$$g"; } > $@
	@echo "wrote $@ (the compose stack's Redis password)"

.PHONY: compose-up
compose-up: images $(COMPOSE_ENV) ## Start docker-compose.yml (Redis, example agents, orchestrator); wait until healthy
	@GO='$(GO)' scripts/compose-plugin.sh $(COMPOSE_VERSION) || echo "compose-up: no Compose v2 plugin; using docker-compose (v1)"
	$(COMPOSE) up -d --wait
	@echo "Redis: redis://:<SETT_REDIS_PASSWORD from $(COMPOSE_ENV)>@127.0.0.1:$${SETT_REDIS_PORT:-6379}/0, instance $${SETT_INSTANCE:-compose}"

.PHONY: compose-down
compose-down: $(COMPOSE_ENV) ## Stop the compose stack (keeps the Redis volume; PURGE=1 deletes it)
	$(COMPOSE) down $(if $(PURGE),--volumes)
