# Helm chart checks: helm lint and helm template | kubeconform, for a plain
# URL, a Sentinel and a Cluster setting. Both tools install with
# `go install` from the Go module proxy into bin/tools.
HELM_VERSION ?= v3.16.3
KUBECONFORM_VERSION ?= v0.6.7
TOOLS := $(CURDIR)/bin/tools
CHART := deploy/helm/sett

$(TOOLS)/helm:
	GOBIN=$(TOOLS) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(TOOLS)/kubeconform:
	GOBIN=$(TOOLS) go install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

.PHONY: test-helm
test-helm: $(TOOLS)/helm $(TOOLS)/kubeconform ## Lint the Helm chart and validate its manifests with kubeconform (offline: skips the ServiceMonitor CRD)
	$(TOOLS)/helm lint $(CHART) --set redis.url=redis://redis:6379/0
	$(TOOLS)/helm template t $(CHART) --set redis.url=redis://redis:6379/0 | $(TOOLS)/kubeconform -strict -summary -ignore-missing-schemas
	$(TOOLS)/helm template t $(CHART) --set 'redis.sentinel.masterName=m,redis.sentinel.addresses={s0:26379,s1:26379},redis.tls.enabled=true,redis.tls.secretName=tls,serviceMonitor.enabled=true' | $(TOOLS)/kubeconform -strict -summary -ignore-missing-schemas
	$(TOOLS)/helm template t $(CHART) --set 'redis.cluster.addresses={r0:6379,r1:6379,r2:6379}' | $(TOOLS)/kubeconform -strict -summary -ignore-missing-schemas
