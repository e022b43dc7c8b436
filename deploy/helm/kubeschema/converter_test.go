package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileNameFollowsKubeconformLayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		gvk  GVK
		want string
	}{
		{"core", GVK{"", "v1", "Service"}, "service-v1.json"},
		{"named group", GVK{"apps", "v1", "StatefulSet"}, "statefulset-apps-v1.json"},
		{"dotted group", GVK{"networking.k8s.io", "v1", "NetworkPolicy"}, "networkpolicy-networking-v1.json"},
		{"crd group", GVK{"monitoring.coreos.com", "v1", "ServiceMonitor"}, "servicemonitor-monitoring-v1.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.gvk.FileName(); got != tc.want {
				t.Errorf("FileName() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSchemaClosesObjectsAndWidensIntOrString(t *testing.T) {
	defs := map[string]any{
		"x.Thing": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"apiVersion": map[string]any{"type": "string"},
				"kind":       map[string]any{"type": "string"},
				"port":       map[string]any{"$ref": "#/definitions/x.IntOrString"},
				"labels":     map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			},
			"x-kubernetes-group-version-kind": []any{map[string]any{"group": "x.io", "version": "v1", "kind": "Thing"}},
		},
		"x.IntOrString": map[string]any{"type": "string", "format": "int-or-string"},
		"x.Unused":      map[string]any{"type": "string"},
	}
	c := NewConverter(defs)
	kinds, defOf := c.Kinds()
	if len(kinds) != 1 || defOf[kinds[0]] != "x.Thing" {
		t.Fatalf("Kinds() = %v %v, want x.io/v1 Thing only", kinds, defOf)
	}
	s, err := c.Schema("x.Thing", kinds[0])
	if err != nil {
		t.Fatal(err)
	}
	if s["additionalProperties"] != false {
		t.Errorf("root object is open: additionalProperties = %v", s["additionalProperties"])
	}
	labels := s["properties"].(map[string]any)["labels"].(map[string]any)
	if ap, ok := labels["additionalProperties"].(map[string]any); !ok || ap["type"] == nil {
		t.Errorf("a map lost its value schema: %v", labels)
	}
	got := s["definitions"].(map[string]any)
	if _, ok := got["x.Unused"]; ok || len(got) != 1 {
		t.Errorf("definitions = %v, want only the reachable x.IntOrString", got)
	}
	if _, ok := got["x.IntOrString"].(map[string]any)["oneOf"]; !ok {
		t.Errorf("IntOrString is not a oneOf: %v", got["x.IntOrString"])
	}
	if _, err := NewConverter(map[string]any{"a": map[string]any{"$ref": "#/definitions/missing"}}).Schema("a", GVK{}); err == nil {
		t.Error("a dangling $ref was accepted")
	}
}

// testK8sVersion is the swagger the kubeconform test converts. It need not
// follow mk/helm.mk's KUBE_VERSION: the test checks the converter.
const testK8sVersion = "v1.34.4"

// testServiceMonitorCRD is the CRD the test converts along (any version
// of the module will do, as above).
const testServiceMonitorCRD = "github.com/prometheus-operator/prometheus-operator@v0.85.0:example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"

// TestKubeconformWithGeneratedSchemas converts the real swagger.json and
// runs kubeconform -strict on manifests that the API server would accept
// or refuse.
func TestKubeconformWithGeneratedSchemas(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads k8s.io/kubernetes through the module proxy and builds kubeconform")
	}
	dir := filepath.Join(t.TempDir(), "schemas")
	var out bytes.Buffer
	if err := run([]string{"-k8s", testK8sVersion, "-crd", testServiceMonitorCRD, "-out", dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"servicemonitor-monitoring-v1.json", "deployment-apps-v1.json", "statefulset-apps-v1.json", "service-v1.json", "secret-v1.json", "configmap-v1.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("no schema %s: %v", f, err)
		}
	}
	// A second run finds the directory and does nothing.
	out.Reset()
	if err := run([]string{"-k8s", testK8sVersion, "-out", dir}, &out); err != nil || !strings.Contains(out.String(), "nothing to do") {
		t.Errorf("second run: %v, %q", err, out.String())
	}
	kubeconform := kubeconformBinary(t)

	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  selector: {matchLabels: {app: d}}
  strategy: {rollingUpdate: {maxSurge: "25%%", maxUnavailable: 1}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
        - name: c
          image: i
          ports: [{name: http, containerPort: 8080}]
          livenessProbe: {httpGet: {path: /healthz, port: %s}}
          resources: {limits: {cpu: %s, memory: 64Mi}}
          %s
`
	deploy := func(port, cpu, extra string) string {
		return fmt.Sprintf(deployment, port, cpu, extra)
	}
	for _, tc := range []struct {
		name     string
		manifest string
		valid    bool
	}{
		{"port by name", deploy("http", `"500m"`, ""), true},
		{"port by number", deploy("8080", "1", ""), true},
		{"service targetPort both ways", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80, targetPort: http}, {port: 81, targetPort: 8081}]\n", true},
		{"unknown field", deploy("http", "1", "imagePullPolicyy: Always"), false},
		{"unknown top-level field", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndatta: {a: b}\n", false},
		{"wrong type", deploy("http", "1", "stdin: \"yes\""), false},
		{"port neither int nor string", deploy("[8080]", "1", ""), false},
		{"servicemonitor", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\nspec:\n  selector: {matchLabels: {a: b}}\n  endpoints: [{port: http, path: /metrics, interval: 30s}]\n", true},
		{"servicemonitor unknown field", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\nspec:\n  selector: {matchLabels: {a: b}}\n  endpoints: [{prot: http}]\n", false},
		{"map value of wrong type", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {a: [1]}}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(kubeconform, "-strict", "-summary",
				"-schema-location", dir+"/{{ .ResourceKind }}{{ .KindSuffix }}.json", "-")
			cmd.Stdin = strings.NewReader(tc.manifest)
			res, err := cmd.CombinedOutput()
			if tc.valid && err != nil {
				t.Errorf("refused a valid manifest: %v\n%s\n%s", err, res, tc.manifest)
			}
			if !tc.valid && err == nil {
				t.Errorf("accepted an invalid manifest:\n%s\n%s", res, tc.manifest)
			}
			if !tc.valid && !strings.Contains(string(res), "is invalid") {
				t.Errorf("refused for another reason than the schema:\n%s", res)
			}
		})
	}
}

// kubeconformBinary returns $KUBECONFORM, or the repository's
// bin/tools/kubeconform, installed at mk/helm.mk's pinned version when it
// is missing.
func kubeconformBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KUBECONFORM"); p != "" {
		return p
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "tools", "kubeconform")
	cmd := exec.Command("make", "-s", "-C", root, bin)
	if res, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make %s: %v\n%s", bin, err, res)
	}
	return bin
}
