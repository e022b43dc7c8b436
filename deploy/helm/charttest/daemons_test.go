package charttest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/acl"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// container is the part of a rendered Deployment's container the daemons
// test reads: its environment as Kubernetes would build it.
type container struct {
	Name    string   `yaml:"name"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name     string `yaml:"name"`
				Key      string `yaml:"key"`
				Optional bool   `yaml:"optional"`
			} `yaml:"secretKeyRef"`
			FieldRef *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	EnvFrom []struct {
		SecretRef *struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
}

type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers     []container `yaml:"containers"`
				InitContainers []container `yaml:"initContainers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestDaemonsRunWithTheRenderedConfiguration stands in for a cluster: it
// renders the chart for a managed Redis over TLS with client certificates
// and ACL users, and an agent whose tool needs an API key from a Secret;
// then it starts the real orchestrator and cub as their pods would —
// the rendered sett.yml, the TLS Secret's files where the pod mounts
// them, and each container's environment resolved from the rendered env
// and envFrom against the Secrets — against a local TLS-only Redis that
// requires client certificates. A workflow completes, and the tool's
// answer shows it read the key from the Secret (and nothing of the
// cub's Redis password).
func TestDaemonsRunWithTheRenderedConfiguration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds helm and the daemons, starts redis-server")
	}
	dir := t.TempDir()
	files, err := redistest.NewTLSFiles(filepath.Join(dir, "tls-src"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := redistest.NewServer(redistest.ServerOptions{Password: "admin-pw", TLS: files})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	ctx := context.Background()

	// The managed Redis's ACL users, with the passwords of the Secret
	// "sett-redis" (keys: the user names, as the chart documents).
	const inst = "chart"
	secrets := map[string]map[string]string{
		"sett-redis": {},
		"model-keys": {"openai": "sk-from-the-secret", "unused": "sk-other"},
	}
	admin := srv.Raw()
	t.Cleanup(func() { _ = admin.Close() })
	for _, u := range acl.Users(inst, false, []string{"planner"}) {
		pw := "pw-" + u.Name
		secrets["sett-redis"][u.Name] = pw
		if err := admin.Do(ctx, append([]any{"ACL"}, u.Args(pw)...)...).Err(); err != nil {
			t.Fatalf("ACL SETUSER %s: %v", u.Name, err)
		}
	}

	url := strings.Replace(srv.URL(), ":admin-pw@", "", 1)
	// The tool answers with the key it was given and whether it sees the
	// cub's Redis password.
	tool := `printf '{"artefact_type":"Plan","artefact_payload":"key=%s redis=%s"}' "$OPENAI_API_KEY" "${SETT_REDIS_PASSWORD:-none}"`
	values := filepath.Join(dir, "values.yaml")
	writeFile(t, values, `instance: `+inst+`
redis:
  url: "`+url+`"
  tls: {enabled: true, secretName: sett-redis-tls, clientCertificate: true, serverName: "`+files.ServerName+`"}
  existingSecret: sett-redis
settYml: |
  version: "1.0"
  orchestrator: {bid_timeout: 2s}
  agents:
    planner:
      command: ["sh", "-c", `+quote(tool)+`]
      consumes: ["GoalDefined"]
      environment_from_host: [OPENAI_API_KEY]
agents:
  planner:
    image: sett-example-writer:local
    env:
      - name: OPENAI_API_KEY
        valueFrom: {secretKeyRef: {name: model-keys, key: openai}}
`)
	objs := renderFile(t, values)

	// The pod's mounts, made local: the TLS Secret's keys as files in
	// one directory, sett.yml from the ConfigMap pointing at it.
	tlsDir := filepath.Join(dir, "tls")
	for dst, src := range map[string]string{"ca.crt": files.CA, "tls.crt": files.ClientCert, "tls.key": files.ClientKey} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(tlsDir, dst), string(b))
	}
	settYml := manifestNamed(t, objs, "ConfigMap", "t-config").Data["sett.yml"]
	for _, want := range []string{"cert_file: /etc/sett/tls/tls.crt", "key_file: /etc/sett/tls/tls.key", "ca_file: /etc/sett/tls/ca.crt"} {
		if !strings.Contains(settYml, want) {
			t.Fatalf("rendered sett.yml lacks %q:\n%s", want, settYml)
		}
	}
	config := filepath.Join(dir, "sett.yml")
	writeFile(t, config, strings.ReplaceAll(settYml, "/etc/sett/tls", tlsDir))

	bin := stacktest.Build(t)
	workspace := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	local := map[string]string{"SETT_CONFIG": config, "SETT_HTTP_ADDR": "127.0.0.1:0", "SETT_WORKSPACE": workspace,
		"HOME": dir, "PATH": bin.Dir + ":" + os.Getenv("PATH")}
	start(t, bin.Orchestrator, podEnv(t, manifestNamed(t, objs, "Deployment", "t-orchestrator"), secrets, local), filepath.Join(dir, "orchestrator.log"))
	start(t, bin.Cub, podEnv(t, manifestNamed(t, objs, "Deployment", "t-agent-planner"), secrets, local), filepath.Join(dir, "cub.log"))

	bb, err := blackboard.DialConn(ctx, blackboard.Conn{URL: srv.URL(), TLS: files.ClientConfig()}, blackboard.Options{Instance: inst})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bb.Close() })
	// Both daemons up: the orchestrator leads and sees the cub's agent.
	eventually.True(t, 60*time.Second, "the orchestrator to see the planner live", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "orchestrator.log"))
		return strings.Contains(string(b), `"live_agents":["planner"]`)
	})
	g := blackboard.NewGoal("plan with the key", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	w, err := stacktest.WaitWorkflow(ctx, bb, g.ID, 90*time.Second)
	if err != nil || w.Status != blackboard.WorkflowCompleted {
		dumpLogs(t, dir)
		t.Fatalf("workflow %v (%v), want completed", w, err)
	}
	page, err := bb.ListArtefacts(ctx, blackboard.PageQuery{WorkflowID: g.ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	arts, err := bb.GetArtefacts(ctx, page.IDs)
	if err != nil {
		t.Fatal(err)
	}
	var payloads []string
	for _, a := range arts {
		if a != nil && a.Type == "Plan" {
			payloads = append(payloads, a.Payload)
		}
	}
	if len(payloads) != 1 || payloads[0] != "key=sk-from-the-secret redis=none" {
		dumpLogs(t, dir)
		t.Fatalf("Plan payloads %q, want one saying key=sk-from-the-secret redis=none", payloads)
	}
}

// podEnv is the environment Kubernetes would give the Deployment's first
// container: values, Secret keys, the pod name for fieldRefs, envFrom
// Secrets; then local replaces what stands for the pod's files and ports.
func podEnv(t *testing.T, d manifest, secrets map[string]map[string]string, local map[string]string) []string {
	t.Helper()
	return containerEnv(t, d, d.Spec.Template.Spec.Containers[0], secrets, local)
}

// containerEnv is podEnv for container c of the Deployment d.
func containerEnv(t *testing.T, d manifest, c container, secrets map[string]map[string]string, local map[string]string) []string {
	t.Helper()
	env := map[string]string{}
	for _, ref := range c.EnvFrom {
		if ref.SecretRef == nil {
			t.Fatalf("%s: envFrom other than secretRef", d.Metadata.Name)
		}
		for k, v := range secrets[ref.SecretRef.Name] {
			env[k] = v
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := secrets[ref.Name][ref.Key]
			if !ok && !ref.Optional {
				t.Fatalf("%s: %s wants Secret %s key %s, which the test's Secrets lack", d.Metadata.Name, e.Name, ref.Name, ref.Key)
			}
			if ok {
				env[e.Name] = v
			}
		case e.ValueFrom.FieldRef != nil:
			env[e.Name] = d.Metadata.Name + "-0"
		}
	}
	for k, v := range local {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// start runs a daemon until the test ends (SIGTERM, then waiting).
func start(t *testing.T, bin string, env []string, logPath string) {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
}

func dumpLogs(t *testing.T, dir string) {
	for _, name := range []string{"orchestrator.log", "cub.log"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		t.Logf("==== %s ====\n%s", name, b)
	}
}

// renderFile runs helm template with a values file.
func renderFile(t *testing.T, values string) []manifest {
	t.Helper()
	return decodeManifests(t, helmTemplate(t, "-f", values), func(o manifest) bool { return o.Kind != "" })
}

func manifestNamed(t *testing.T, objs []manifest, kind, name string) manifest {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && o.Metadata.Name == name {
			return o
		}
	}
	t.Fatalf("the chart renders no %s %s", kind, name)
	return manifest{}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// quote is s as a double-quoted YAML scalar.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
