# Helm chart checks: helm lint and helm template | kubeconform, for a plain
# URL, a Sentinel and a Cluster setting. Both tools install with
# `go install` from the Go module proxy into bin/tools.
HELM_VERSION ?= v3.16.3
KUBECONFORM_VERSION ?= v0.6.7
# kubeconform downloads the Kubernetes JSON schemas from GitHub; offline,
# point it at a local copy: KUBECONFORM_FLAGS="-schema-location DIR/{{ .ResourceKind }}{{ .KindSuffix }}.json".
KUBECONFORM_FLAGS ?=
TOOLS := $(CURDIR)/bin/tools
CHART := deploy/helm/sett

$(TOOLS)/helm:
	GOBIN=$(TOOLS) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(TOOLS)/kubeconform:
	GOBIN=$(TOOLS) go install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

.PHONY: test-helm
test-helm: $(TOOLS)/helm $(TOOLS)/kubeconform ## Lint the Helm chart and validate its manifests with kubeconform (schemas: KUBECONFORM_FLAGS=-schema-location DIR offline)
	$(TOOLS)/helm lint $(CHART) --set redis.url=redis://redis:6379/0
	$(TOOLS)/helm template t $(CHART) --set redis.url=redis://redis:6379/0 | $(TOOLS)/kubeconform -strict -summary -skip ServiceMonitor $(KUBECONFORM_FLAGS)
	$(TOOLS)/helm template t $(CHART) --set 'redis.sentinel.masterName=m,redis.sentinel.addresses={s0:26379,s1:26379},redis.tls.enabled=true,redis.tls.secretName=tls,serviceMonitor.enabled=true' | $(TOOLS)/kubeconform -strict -summary -skip ServiceMonitor $(KUBECONFORM_FLAGS)
	$(TOOLS)/helm template t $(CHART) --set 'redis.cluster.addresses={r0:6379,r1:6379,r2:6379}' | $(TOOLS)/kubeconform -strict -summary -skip ServiceMonitor $(KUBECONFORM_FLAGS)
