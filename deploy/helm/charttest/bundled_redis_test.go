package charttest

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v3"

	"github.com/settdev/sett/internal/acl"
	"github.com/settdev/sett/internal/redistest"
)

// object is the part of a rendered manifest the tests read.
type object struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Env []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom struct {
							SecretKeyRef struct {
								Name string `yaml:"name"`
								Key  string `yaml:"key"`
							} `yaml:"secretKeyRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestBundledRedisRunsWithTheChartsUsers renders the chart with the
// bundled Redis and two agents, starts a real redis-server with the
// rendered redis.conf and ACL file, and checks that: Redis accepts both;
// AOF is on with everysec; the ACL users are exactly internal/acl's, each
// logs in with the password in the rendered Secret and is held to its
// rules; and every component is wired to the bundled Redis as its own user.
func TestBundledRedisRunsWithTheChartsUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds helm and starts a redis-server")
	}
	const inst = "demo"
	objs := render(t, "instance="+inst+",redis.bundled.enabled=true,agents.reviewer.image=sett-example-reviewer:local")
	pwSecret := find(t, objs, "Secret", "t-redis")
	passwords := map[string]string{}
	for k, v := range pwSecret.Data {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatalf("Secret t-redis key %s: %v", k, err)
		}
		passwords[k] = string(b)
	}
	// The Redis pod's init step builds the ACL file from the users'
	// rules and the password Secret mounted as files: run it the same way.
	users := find(t, objs, "ConfigMap", "t-redis-users")
	pwDir, initDir := t.TempDir(), t.TempDir()
	for k, v := range passwords {
		if err := os.WriteFile(filepath.Join(pwDir, k), []byte(v), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"acl-init.sh", "users.rules"} {
		if err := os.WriteFile(filepath.Join(initDir, f), []byte(users.Data[f]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	aclPath := filepath.Join(initDir, "users.acl")
	initCmd := exec.Command("sh", filepath.Join(initDir, "acl-init.sh"))
	initCmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PASSWORDS=" + pwDir, "RULES=" + filepath.Join(initDir, "users.rules"), "OUT=" + aclPath}
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("the ACL init step failed: %v\n%s", err, out)
	}
	aclBytes, err := os.ReadFile(aclPath)
	if err != nil {
		t.Fatal(err)
	}
	aclFile := string(aclBytes)

	// The users are internal/acl's, rule for rule, with the Secret's
	// passwords (hashed); plus the administrator (default).
	var want []string
	for _, u := range acl.Users(inst, false, []string{"planner", "reviewer"}) {
		pw := passwords[u.Name]
		if pw == "" {
			t.Fatalf("Secret t-redis has no password for %s (keys %v)", u.Name, keys(passwords))
		}
		want = append(want, strings.TrimPrefix(u.ConfLine(pw), "user "))
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(aclFile), "\n") {
		if line = strings.TrimSpace(line); !strings.HasPrefix(line, "user default ") {
			got = append(got, strings.TrimPrefix(line, "user "))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ACL file users differ from internal/acl's:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(aclFile, passwords[acl.Name(inst, acl.RoleReader, "")]) {
		t.Error("the ACL file holds a password in clear")
	}

	// Redis takes the rendered files: the conf (network and paths made
	// local for the test) and the ACL file.
	var extra []string
	for _, line := range strings.Split(find(t, objs, "ConfigMap", "t-redis").Data["redis.conf"], "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "port", "bind", "dir": // the test server's own
			continue
		case "aclfile":
			line = `aclfile "` + aclPath + `"`
		}
		extra = append(extra, line)
	}
	srv, err := redistest.NewServer(redistest.ServerOptions{Password: passwords["password"], Extra: extra})
	if err != nil {
		t.Fatalf("redis-server refused the chart's redis.conf or ACL file: %v", err)
	}
	t.Cleanup(srv.Stop)
	ctx := context.Background()
	admin := srv.Raw()
	t.Cleanup(func() { _ = admin.Close() })
	for param, val := range map[string]string{"appendonly": "yes", "appendfsync": "everysec", "maxmemory-policy": "noeviction"} {
		if got, err := admin.ConfigGet(ctx, param).Result(); err != nil || got[param] != val {
			t.Errorf("CONFIG GET %s = %v (%v), want %s", param, got, err, val)
		}
	}

	login := func(user string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: passwords[user]})
		t.Cleanup(func() { _ = c.Close() })
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("%s cannot log in with the Secret's password: %v", user, err)
		}
		return c
	}
	prefix := "sett:" + inst + ":"
	orch := login(acl.Name(inst, acl.RoleOrchestrator, ""))
	planner := login(acl.Name(inst, acl.RoleCub, "planner"))
	reader := login(acl.Name(inst, acl.RoleReader, ""))
	if err := orch.Set(ctx, prefix+"agent:reviewer:x", "1", 0).Err(); err != nil {
		t.Errorf("orchestrator SET in its instance: %v", err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"orchestrator outside its instance", orch.Set(ctx, "sett:other:x", "1", 0).Err()},
		{"cub FLUSHALL", planner.FlushAll(ctx).Err()},
		{"cub writes another agent's keys", planner.Set(ctx, prefix+"agent:reviewer:x", "2", 0).Err()},
		{"reader writes", reader.Set(ctx, prefix+"artefact:1", "x", 0).Err()},
	} {
		if tc.err == nil || !strings.HasPrefix(tc.err.Error(), "NOPERM") {
			t.Errorf("%s: %v, want NOPERM", tc.name, tc.err)
		}
	}
	if err := planner.Set(ctx, prefix+"agent:planner:x", "1", 0).Err(); err != nil {
		t.Errorf("cub SET on its own agent key: %v", err)
	}

	// Each component logs in as its own user, with its key of the Secret,
	// to the bundled Redis.
	if sett := find(t, objs, "ConfigMap", "t-config").Data["sett.yml"]; !strings.Contains(sett, `url: "redis://t-redis:6379/0"`) {
		t.Errorf("sett.yml does not point at the bundled Redis:\n%s", sett)
	}
	for deploy, user := range map[string]string{
		"t-orchestrator":   acl.Name(inst, acl.RoleOrchestrator, ""),
		"t-agent-planner":  acl.Name(inst, acl.RoleCub, "planner"),
		"t-agent-reviewer": acl.Name(inst, acl.RoleCub, "reviewer"),
	} {
		var name, secret, key string
		for _, e := range find(t, objs, "Deployment", deploy).Spec.Template.Spec.Containers[0].Env {
			switch e.Name {
			case "SETT_REDIS_USERNAME":
				name = e.Value
			case "SETT_REDIS_PASSWORD":
				secret, key = e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key
			}
		}
		if name != user || secret != "t-redis" || key != user {
			t.Errorf("%s logs in as %q with Secret %s key %s, want %s with t-redis key %s", deploy, name, secret, key, user, user)
		}
	}
}

// render runs helm template on the chart with --set values and returns the
// objects it prints.
func render(t *testing.T, values string) []object {
	t.Helper()
	return decodeManifests(t, helmTemplate(t, "--set", values), func(o object) bool { return o.Kind != "" })
}

// helmTemplate runs helm template on the chart with args (values) and
// returns what it prints; the helm binary is built first if needed.
func helmTemplate(t *testing.T, args ...string) []byte {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	helm := filepath.Join(root, "bin", "tools", "helm")
	if res, err := exec.Command("make", "-s", "-C", root, helm).CombinedOutput(); err != nil {
		t.Fatalf("make %s: %v\n%s", helm, err, res)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(helm, append([]string{"template", "t", filepath.Join(root, "deploy", "helm", "sett")}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// decodeManifests decodes every YAML document of out into T and keeps
// those keep accepts (helm prints empty documents between templates).
func decodeManifests[T any](t *testing.T, out []byte, keep func(T) bool) []T {
	t.Helper()
	var objs []T
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var o T
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("helm template output: %v", err)
		}
		if keep(o) {
			objs = append(objs, o)
		}
	}
	return objs
}

func find(t *testing.T, objs []object, kind, name string) object {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && o.Metadata.Name == name {
			return o
		}
	}
	t.Fatalf("the chart renders no %s %s", kind, name)
	return object{}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestBundledRedisInitNamesAMissingPassword: with an existingSecret that
// lacks a user's key, the Redis pod's init step fails and says which key
// to add.
func TestBundledRedisInitNamesAMissingPassword(t *testing.T) {
	if testing.Short() {
		t.Skip("builds helm")
	}
	objs := render(t, "redis.bundled.enabled=true,redis.bundled.existingSecret=mine")
	for _, o := range objs {
		if o.Kind == "Secret" {
			t.Errorf("with existingSecret the chart still renders Secret %s", o.Metadata.Name)
		}
	}
	users := find(t, objs, "ConfigMap", "t-redis-users")
	pwDir, initDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(pwDir, "password"), []byte("admin"), 0o400); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"acl-init.sh", "users.rules"} {
		if err := os.WriteFile(filepath.Join(initDir, f), []byte(users.Data[f]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", filepath.Join(initDir, "acl-init.sh"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PASSWORDS=" + pwDir, "RULES=" + filepath.Join(initDir, "users.rules"), "OUT=" + filepath.Join(initDir, "users.acl")}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `has no key "sett-demo-orchestrator"`) {
		t.Fatalf("init step with only the admin password: %v\n%s\nwant a failure naming sett-demo-orchestrator", err, out)
	}
	if _, err := os.Stat(filepath.Join(initDir, "users.acl")); err == nil {
		t.Error("the failed init step left an ACL file for Redis to load")
	}
}
