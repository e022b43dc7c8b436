# Container images, built offline from static binaries (images/README.md).

REDIS_IMAGE ?= sett-redis:local

.PHONY: images
images: build ## Build the images offline: sett-orchestrator, sett-cub, the example agents, sett-redis
	SETT_BIN='$(BIN)' SETT_REDIS_IMAGE='$(REDIS_IMAGE)' VERSION='$(VERSION)' LDFLAGS='$(LDFLAGS)' GO='$(GO)' images/build.sh

.PHONY: redis-image
redis-image: ## Rebuild the local Redis image from the host's redis-server
	SETT_REDIS_REBUILD=1 SETT_REDIS_IMAGE='$(REDIS_IMAGE)' images/build.sh redis
