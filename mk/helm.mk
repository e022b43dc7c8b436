# Helm chart checks: helm lint, then helm template | kubeconform -strict for
# each value set of deploy/helm/testvalues (plain URL, managed Redis with
# mTLS + ACL, Sentinel + TLS, Cluster, bundled Redis with and without
# persistence, the vault, a coding agent with its repository), the chart's
# refusals of missing or conflicting settings, the Go tests of deploy/helm
# (the schema converter, the chart's ACL rules against internal/acl, the
# bundled Redis's rendered config on a real redis-server, the daemons run
# with the rendered sett.yml and Secrets) and, in its own module, every
# rendered pod against the "restricted" Pod Security Standard.
#
# Nothing comes from GitHub: helm and kubeconform install with `go install`
# from the Go module proxy into bin/tools, and the JSON schemas kubeconform
# checks against are made by deploy/helm/kubeschema from the swagger.json of
# the k8s.io/kubernetes module (also from the proxy) and, for the
# ServiceMonitor CRD, from the CRD file in the prometheus-operator module,
# cached in bin/tools/kubeschema/.
HELM_VERSION ?= v3.16.3
KUBECONFORM_VERSION ?= v0.6.7
# The Kubernetes API the manifests must fit (a k8s.io/kubernetes module
# version: `go list -m -versions k8s.io/kubernetes` lists them).
KUBE_VERSION ?= v1.34.4
# The prometheus-operator module whose CRD gives the ServiceMonitor schema.
PROMETHEUS_OPERATOR_VERSION ?= v0.85.0
SERVICEMONITOR_CRD := github.com/prometheus-operator/prometheus-operator@$(PROMETHEUS_OPERATOR_VERSION):example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml
TOOLS := $(CURDIR)/bin/tools
# A comma inside $(call ...) arguments.
helm_comma := ,
CHART := deploy/helm/sett
KUBESCHEMA := $(TOOLS)/kubeschema/$(KUBE_VERSION)-prometheus-operator-$(PROMETHEUS_OPERATOR_VERSION)
KUBECONFORM_FLAGS ?= -strict -summary -schema-location '$(KUBESCHEMA)/{{ .ResourceKind }}{{ .KindSuffix }}.json'

$(TOOLS)/helm:
	GOBIN=$(TOOLS) $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(TOOLS)/kubeconform:
	GOBIN=$(TOOLS) $(GO) install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

# Regenerated when the converter changes.
$(KUBESCHEMA): $(wildcard deploy/helm/kubeschema/*.go)
	rm -rf $@
	$(GO) run ./deploy/helm/kubeschema -k8s $(KUBE_VERSION) -crd $(SERVICEMONITOR_CRD) -out $@

# The value sets every check renders: one file each in deploy/helm/testvalues
# (managed Redis with mTLS + ACL, Sentinel, Cluster, bundled, the vault, a
# coding agent with its repository, ...).
HELM_VALUE_SETS := $(sort $(wildcard deploy/helm/testvalues/*.yaml))

# helm_check_file renders the chart with the values file $(1) and validates
# it. pipefail: a template that fails to render must fail the check, not
# hand kubeconform an empty stream.
define helm_check_file
	$(TOOLS)/helm lint --strict $(CHART) -f $(1)
	set -o pipefail; $(TOOLS)/helm template t $(CHART) -f $(1) | $(TOOLS)/kubeconform $(KUBECONFORM_FLAGS)

endef

# helm_refuse checks that rendering with $(1) fails with a message
# containing $(2).
define helm_refuse
	@out=$$($(TOOLS)/helm template t $(CHART) --set '$(1)' 2>&1) && { echo "helm template accepted $(1)"; exit 1; }; \
	grep -qF -- '$(2)' <<<"$$out" || { echo "helm template refused $(1) without saying '$(2)':"; echo "$$out"; exit 1; }; \
	echo "refused as expected: $(1)"
endef

.PHONY: test-helm
test-helm: $(TOOLS)/helm $(TOOLS)/kubeconform $(KUBESCHEMA) ## Lint the Helm chart and validate every topology's manifests with kubeconform, offline
	$(foreach f,$(HELM_VALUE_SETS),$(call helm_check_file,$(f)))
	$(call helm_refuse,instance=demo,no Redis configured)
	$(call helm_refuse,redis.bundled.enabled=true$(helm_comma)redis.url=redis://r:6379/0,conflicting Redis settings: redis.bundled.enabled$(helm_comma) redis.url)
	$(call helm_refuse,redis.url=redis://r:6379/0$(helm_comma)redis.cluster.addresses={r0:6379},conflicting Redis settings: redis.url$(helm_comma) redis.cluster.addresses)
	$(call helm_refuse,redis.bundled.enabled=true$(helm_comma)redis.tls.enabled=true,bundled Redis serves plaintext)
	$(call helm_refuse,redis.url=redis://r:6379/0$(helm_comma)redis.passwordSecret=x,redis.passwordSecret was renamed redis.existingSecret)
	$(call helm_refuse,redis.url=redis://r:6379/0$(helm_comma)networkPolicy.enabled=true,networkPolicy.redis.to is required)
	$(call helm_refuse,redis.url=redis://r:6379/0$(helm_comma)console.enabled=true,console.tokenSecret.name is required)
	@out=$$($(TOOLS)/helm template t $(CHART) -f deploy/helm/testvalues/refused/controller.yaml 2>&1) && { echo "helm template accepted a controller agent"; exit 1; }; \
	grep -qF 'mode controller is not supported on Kubernetes' <<<"$$out" || { echo "$$out"; exit 1; }; echo "refused as expected: a controller agent"
	$(GO) test -count=1 ./deploy/helm/...
	# The restricted Pod Security check has its own module (deploy/helm/podsecurity),
	# so that k8s.io/pod-security-admission stays out of the product's go.mod.
	cd deploy/helm/podsecurity && $(GO) test -count=1 ./...
