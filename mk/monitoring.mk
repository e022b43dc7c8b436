# Monitoring: the Grafana dashboard and Prometheus alerting rules under
# deploy/monitoring. promtool comes from Debian's prometheus package
# (.ci/run installs it); the Go test checks the queries' metric names
# against the series the orchestrator and the cub export.
PROMTOOL ?= promtool

.PHONY: test-monitoring
test-monitoring: ## Check the alerting rules (promtool check rules, promtool test rules) and the dashboard's and rules' metric names
	@command -v $(PROMTOOL) >/dev/null || { echo "promtool is needed: apt-get install prometheus (Debian), or set PROMTOOL"; exit 1; }
	$(PROMTOOL) check rules deploy/monitoring/sett-alerts.yml
	$(PROMTOOL) test rules deploy/monitoring/sett-alerts_test.yml
	$(GO) test -count=1 ./deploy/monitoring/...
