# End-to-end tests: real images, containers and the Docker runtime
# (e2e/). A missing Docker daemon is a failure, not a skip.

E2E_TIMEOUT ?= 20m

.PHONY: test-e2e
test-e2e: images ## End-to-end tests on Docker: builds the images, then go test ./e2e/ and the container-backed ./internal/worker/
	TESTCONTAINERS_RYUK_DISABLED=true $(GO) test -count=1 -timeout $(E2E_TIMEOUT) ./internal/worker/ ./e2e/
