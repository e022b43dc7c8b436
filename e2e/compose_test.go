package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/docker"
	"github.com/settdev/sett/internal/stacktest"
)

// The compose stack as a newcomer starts it, with Compose v1
// (docker-compose, as Debian ships it): a copy of the repository's
// docker-compose.yml and sett.yml.example in a fresh directory, `sett init
// --compose` for .env, `docker-compose up -d`, and then `sett status` and
// `sett redis-cli PING` from that directory without flags; `sett list`
// shows the stack with its components as "docker (compose)", and `sett
// down` refuses to stop it (it names `docker-compose down`) and leaves
// every container running. Needs the sett-*:local images (make images).
func TestComposeV1FromAFreshDirectory(t *testing.T) {
	t.Parallel()
	h := setup(t) // a Docker daemon is required, not optional
	if _, err := exec.LookPath("docker-compose"); err != nil {
		t.Fatal("docker-compose (Compose v1) is not installed: apt-get install docker-compose")
	}
	bin := stacktest.BuildCLI(t)
	root := repoRoot(t)
	dir := t.TempDir()
	for _, f := range []string{"docker-compose.yml", "sett.yml.example"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The orchestrator of this tree (its healthcheck subcommand) in the
	// image `make images` builds, even when sett-orchestrator:local was
	// built from another tree.
	orchestratorImage := "sett-orchestrator:e2e-" + strings.ToLower(instanceName(t))
	buildWith(t, h, orchestratorImage, "FROM sett-orchestrator:local\nCOPY sett-orchestrator /usr/local/bin/sett-orchestrator\n",
		bin.Dir, "sett-orchestrator")
	// The console service's image with the sett of this tree.
	consoleImage := "sett-console:e2e-" + strings.ToLower(instanceName(t))
	buildWith(t, h, consoleImage, "FROM sett-console:local\nCOPY sett /usr/local/bin/sett\n", bin.Dir, "sett")
	state := t.TempDir() // no instance records: the stack is found from .env alone
	run := func(timeout time.Duration, name string, args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "NO_COLOR=1", "SETT_ORCHESTRATOR_IMAGE="+orchestratorImage,
			"SETT_CONSOLE_IMAGE="+consoleImage)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		t.Logf("$ %s %s\n%s", filepath.Base(name), strings.Join(args, " "), out.String())
		return out.String(), err
	}

	if out, err := run(time.Minute, bin.Sett, "init", "--compose"); err != nil || !strings.Contains(out, "Wrote "+filepath.Join(dir, ".env")) {
		t.Fatalf("sett init --compose: %v", err)
	}
	st, err := os.Stat(filepath.Join(dir, ".env"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf(".env: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	env, _ := os.ReadFile(filepath.Join(dir, ".env"))
	for _, want := range []string{"COMPOSE_PROJECT_NAME=sett-", "SETT_REDIS_PORT=", "SETT_WORKSPACE_DIR=" + filepath.Join(dir, "workspace") + "\n"} {
		if !bytes.Contains(env, []byte(want)) {
			t.Errorf(".env lacks %q", want)
		}
	}

	t.Cleanup(func() {
		if t.Failed() {
			run(time.Minute, "docker-compose", "logs", "--no-color", "--tail", "40")
		}
		if _, err := run(3*time.Minute, "docker-compose", "--profile", "console", "down", "-v", "--timeout", "10"); err != nil {
			t.Errorf("docker-compose down -v: %v", err)
		}
	})
	if _, err := run(5*time.Minute, "docker-compose", "up", "-d"); err != nil {
		t.Fatalf("docker-compose up -d: %v", err)
	}
	// The console is a service of its own profile, off by default.
	if out, _ := run(time.Minute, "docker-compose", "ps"); strings.Contains(out, "_console_1") {
		t.Fatal("the console started without its profile")
	}
	if _, err := run(5*time.Minute, "docker-compose", "--profile", "console", "up", "-d", "console"); err != nil {
		t.Fatalf("docker-compose --profile console up -d console: %v", err)
	}

	// Every service has a healthcheck, and every one turns healthy.
	var out string
	var rows, healthy int
	if !eventually.Within(3*time.Minute, func() bool {
		if out, err = run(time.Minute, "docker-compose", "ps"); err != nil {
			t.Fatalf("docker-compose ps: %v", err)
		}
		rows, healthy = 0, 0
		for _, line := range strings.Split(out, "\n") {
			if !strings.Contains(line, "_1 ") {
				continue
			}
			rows++
			if strings.Contains(line, "(healthy)") {
				healthy++
			}
		}
		return rows == 7 && healthy == rows
	}) {
		t.Fatalf("after 3 minutes %d of %d services are healthy (want redis, the orchestrator, 4 agents and the console):\n%s", healthy, rows, out)
	}

	out, err = run(time.Minute, bin.Sett, "--no-color", "status")
	if err != nil || !strings.Contains(out, "compose project sett-") || !strings.Contains(out, "Instance   compose") {
		t.Fatalf("sett status from the compose directory: %v", err)
	}
	for _, agent := range []string{"auditor", "coder", "planner", "reviewer"} {
		if !strings.Contains(out, agent) {
			t.Errorf("sett status lacks agent %s", agent)
		}
	}
	if out, err := run(time.Minute, bin.Sett, "redis-cli", "PING"); err != nil || strings.TrimSpace(out) != "PONG" {
		t.Errorf("sett redis-cli PING from the compose directory: %q, %v", out, err)
	}

	// The console answers on its port with the token of .env, and not
	// without it.
	vars := map[string]string{}
	for _, line := range strings.Split(string(env), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
			vars[k] = v
		}
	}
	url := "http://127.0.0.1:" + vars["SETT_CONSOLE_PORT"] + "/"
	for _, c := range []struct {
		token string
		want  int
	}{{vars["SETT_UI_TOKEN"], http.StatusOK}, {"", http.StatusUnauthorized}} {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("console: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("console %s (token given: %v): %s, want %d", url, c.token != "", resp.Status, c.want)
		}
	}

	// `sett list` finds the stack by its labels, as it finds what `sett
	// up --runtime docker` starts: every component, healthy.
	project := vars["COMPOSE_PROJECT_NAME"]
	var listed runtime.Listing
	if !eventually.Within(time.Minute, func() bool {
		out, err := run(time.Minute, bin.Sett, "list", "-o", "json")
		if err != nil {
			t.Fatalf("sett list -o json: %v", err)
		}
		var ls []runtime.Listing
		if err := json.Unmarshal([]byte(out), &ls); err != nil {
			t.Fatalf("sett list -o json: %v", err)
		}
		listed = runtime.Listing{}
		for _, l := range ls {
			if l.ComposeProject == project {
				listed = l
			}
		}
		return listed.Status == "running"
	}) {
		t.Fatalf("sett list: the compose stack (project %s) is not listed as running: %+v", project, listed)
	}
	if listed.Name != "compose" || listed.Runtime != "docker" || listed.ManagedBy != "compose" || listed.ComposeDir != dir ||
		listed.Workspace != filepath.Join(dir, "workspace") {
		t.Errorf("sett list: %+v; want instance compose, runtime docker, managed by compose in %s", listed, dir)
	}
	var components []string
	for name, state := range listed.Components {
		components = append(components, name+"="+state)
	}
	sort.Strings(components)
	if got, want := strings.Join(components, " "), "auditor=healthy coder=healthy console=healthy orchestrator=healthy planner=healthy redis=healthy reviewer=healthy"; got != want {
		t.Errorf("sett list components: %s\nwant %s", got, want)
	}
	out, err = run(time.Minute, bin.Sett, "--no-color", "list")
	if err != nil {
		t.Fatalf("sett list: %v", err)
	}
	if !regexp.MustCompile(`(?m)^compose +docker \(compose\) +running +7/7 healthy +` + regexp.QuoteMeta(filepath.Join(dir, "workspace")) + ` *$`).MatchString(out) {
		t.Errorf("sett list lacks the row of the compose stack")
	}
	if !strings.Contains(out, "stop it with `docker-compose down` in "+dir) {
		t.Errorf("sett list does not say how to stop the compose stack")
	}

	// `sett down` does not stop it behind Compose's back, whether it
	// names the instance or finds it from .env, and says what to run.
	for _, args := range [][]string{{"down", "--name", "compose"}, {"down", "--purge"}} {
		out, err := run(time.Minute, bin.Sett, args...)
		if err == nil {
			t.Errorf("sett %s: succeeded; want a refusal", strings.Join(args, " "))
		}
		if !strings.Contains(out, "managed by Docker Compose") || !strings.Contains(out, "in "+dir) {
			t.Errorf("sett %s: the refusal does not name the stack's directory", strings.Join(args, " "))
		}
		want := "`docker-compose down`"
		if args[1] == "--purge" {
			want = "`docker-compose down -v`"
		}
		if !strings.Contains(out, want) {
			t.Errorf("sett %s: the refusal does not say to run %s", strings.Join(args, " "), want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := h.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", docker.LabelComposeProject+"="+project)})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, c := range cs.Items {
		if c.State == container.StateRunning {
			running++
		}
	}
	if len(cs.Items) != 7 || running != 7 {
		t.Errorf("after sett down: %d of %d containers of the stack run, want all 7", running, len(cs.Items))
	}
	vs, err := h.cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", docker.LabelComposeProject+"="+project)})
	if err != nil || len(vs.Items) != 1 {
		t.Errorf("after sett down --purge: the stack's volume: %d, %v; want it kept", len(vs.Items), err)
	}
}

// repoRoot is the repository's root (the e2e package's parent).
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}
