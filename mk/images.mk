# Container images, built offline from static binaries (images/README.md).

REDIS_IMAGE ?= sett-redis:local
CODER_BASE_IMAGE ?= sett-coder-base:local

.PHONY: images
images: build ## Build the images offline: sett-orchestrator, sett-cub, the example agents, sett-agent-llm, sett-fake-llm, sett-redis (and sett-agent-coder when its base is present)
	SETT_BIN='$(BIN)' SETT_REDIS_IMAGE='$(REDIS_IMAGE)' CODER_BASE_IMAGE='$(CODER_BASE_IMAGE)' VERSION='$(VERSION)' LDFLAGS='$(LDFLAGS)' GO='$(GO)' images/build.sh

.PHONY: llm-images
llm-images: build ## Build only sett-agent-llm, sett-fake-llm and (when its base is present) sett-agent-coder
	SETT_BIN='$(BIN)' CODER_BASE_IMAGE='$(CODER_BASE_IMAGE)' VERSION='$(VERSION)' LDFLAGS='$(LDFLAGS)' GO='$(GO)' images/build.sh llm fakellm coder

.PHONY: redis-image
redis-image: ## Rebuild the local Redis image from the host's redis-server
	SETT_REDIS_REBUILD=1 SETT_REDIS_IMAGE='$(REDIS_IMAGE)' images/build.sh redis
