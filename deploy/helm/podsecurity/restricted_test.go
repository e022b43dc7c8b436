package podsecurity

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// TestEveryRenderedPodIsRestricted renders the chart with each value set
// and evaluates every pod template (Deployments, StatefulSets) against
// the restricted level of the latest Pod Security Standard.
func TestEveryRenderedPodIsRestricted(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	sets, err := filepath.Glob(filepath.Join(root, "deploy", "helm", "testvalues", "*.yaml"))
	if err != nil || len(sets) < 8 {
		t.Fatalf("value sets in deploy/helm/testvalues: %v (%v), want at least 8", sets, err)
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	restricted := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	for _, set := range sets {
		t.Run(strings.TrimSuffix(filepath.Base(set), ".yaml"), func(t *testing.T) {
			pods := renderPods(t, root, set)
			if len(pods) == 0 {
				t.Fatal("the chart renders no pods")
			}
			for name, tmpl := range pods {
				for _, r := range evaluator.EvaluatePod(restricted, &tmpl.ObjectMeta, &tmpl.Spec) {
					if !r.Allowed {
						t.Errorf("%s violates restricted: %s: %s", name, r.ForbiddenReason, r.ForbiddenDetail)
					}
				}
			}
		})
	}
}

// TestTheEvaluatorRefusesAnUnrestrictedPod: the check itself can fail —
// the chart's orchestrator pod without its seccomp profile is refused.
func TestTheEvaluatorRefusesAnUnrestrictedPod(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	pods := renderPods(t, root, filepath.Join(root, "deploy", "helm", "testvalues", "url.yaml"))
	tmpl, ok := pods["Deployment/t-orchestrator"]
	if !ok {
		t.Fatalf("no orchestrator Deployment among %d pods", len(pods))
	}
	tmpl.Spec.SecurityContext.SeccompProfile = nil
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, r := range evaluator.EvaluatePod(api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}, &tmpl.ObjectMeta, &tmpl.Spec) {
		refused = refused || !r.Allowed
	}
	if !refused {
		t.Error("a pod without a seccomp profile passed the restricted check")
	}
}

// renderPods runs helm template with the values file and returns each
// workload's pod template by "Kind/name".
func renderPods(t *testing.T, root, values string) map[string]corev1.PodTemplateSpec {
	t.Helper()
	helm := filepath.Join(root, "bin", "tools", "helm")
	if out, err := exec.Command("make", "-s", "-C", root, helm).CombinedOutput(); err != nil {
		t.Fatalf("make %s: %v\n%s", helm, err, out)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(helm, "template", "t", filepath.Join(root, "deploy", "helm", "sett"), "-f", values)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template -f %s: %v\n%s", values, err, stderr.String())
	}
	pods := map[string]corev1.PodTemplateSpec{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("rendered document: %v\n%s", err, doc)
		}
		switch meta.Kind {
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict(doc, &d); err != nil {
				t.Fatalf("Deployment: %v", err)
			}
			pods["Deployment/"+d.Name] = d.Spec.Template
		case "StatefulSet":
			var s appsv1.StatefulSet
			if err := yaml.UnmarshalStrict(doc, &s); err != nil {
				t.Fatalf("StatefulSet: %v", err)
			}
			pods["StatefulSet/"+s.Name] = s.Spec.Template
		case "Pod", "Job", "CronJob", "DaemonSet", "ReplicaSet":
			t.Fatalf("the chart renders a %s, which this test does not check yet", meta.Kind)
		}
	}
	return pods
}
