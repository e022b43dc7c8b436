package charttest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitServer serves the bare repositories under root over smart HTTP (git's
// own http-backend), asking for the user and token a Secret would hold,
// as a Git host serving a private repository does.
func gitServer(t *testing.T, root, user, token string) *httptest.Server {
	t.Helper()
	backend, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v (the test needs git)", err)
	}
	h := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(backend)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// git runs git in dir and returns its output, failing the test on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestGitCloneInitChecksOutTheRepository runs the coding agent's rendered
// git-clone init step (its script and environment, the token from the
// Secret the values name) against a private repository served over HTTP:
// the workspace gets the ref's checkout; a restarted pod with the same
// workspace volume keeps the agent's work; a wrong token fails the pod's
// start instead of leaving an empty workspace.
func TestGitCloneInitChecksOutTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds helm")
	}
	repos := t.TempDir()
	src := t.TempDir()
	git(t, src, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(src, "app.go"), []byte("package app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, src, "add", "app.go")
	git(t, src, "commit", "-q", "-m", "first")
	git(t, repos, "clone", "-q", "--bare", src, "app.git")
	srv := gitServer(t, repos, "bot", "s3cret-token")

	values, err := os.ReadFile("../testvalues/coding-agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	valuesPath := filepath.Join(t.TempDir(), "values.yaml")
	writeFile(t, valuesPath, strings.ReplaceAll(string(values), "https://git.example.com/team/app.git", srv.URL+"/app.git"))
	d := manifestNamed(t, renderFile(t, valuesPath), "Deployment", "t-agent-coder")
	var clone *container
	for i, c := range d.Spec.Template.Spec.InitContainers {
		if c.Name == "git-clone" {
			clone = &d.Spec.Template.Spec.InitContainers[i]
		}
	}
	if clone == nil || len(clone.Command) == 0 || len(clone.Args) != 1 {
		t.Fatalf("the coder's Deployment has no git-clone init step with one script: %+v", d.Spec.Template.Spec.InitContainers)
	}
	ws := t.TempDir() // stands for the workspace volume at /workspace
	script := strings.ReplaceAll(clone.Args[0], "/workspace", ws)
	initStep := func(token string) (string, error) {
		secrets := map[string]map[string]string{"git-token": {"username": "bot", "password": token}}
		cmd := exec.Command(clone.Command[0], append(clone.Command[1:], script)...)
		cmd.Env = append(containerEnv(t, d, *clone, secrets, map[string]string{"HOME": t.TempDir()}),
			"PATH="+os.Getenv("PATH"), "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := initStep("wrong-token"); err == nil {
		t.Fatalf("the init step succeeded with a wrong token:\n%s", out)
	}
	out, err := initStep("s3cret-token")
	if err != nil {
		t.Fatalf("the init step failed: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "app.go")); err != nil || string(b) != "package app\n" {
		t.Fatalf("workspace app.go = %q, %v; want the repository's file", b, err)
	}
	if branch := strings.TrimSpace(git(t, ws, "rev-parse", "--abbrev-ref", "HEAD")); branch != "main" {
		t.Errorf("workspace on branch %q, want main", branch)
	}

	// The agent works; the pod restarts with the same volume.
	if err := os.WriteFile(filepath.Join(ws, "app.go"), []byte("package app // changed by the agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = initStep("s3cret-token")
	if err != nil {
		t.Fatalf("the init step failed on a restart: %v\n%s", err, out)
	}
	if !strings.Contains(out, "already holds a checkout") {
		t.Errorf("restart output %q, want it to say the checkout was left as it is", out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "app.go")); string(b) != "package app // changed by the agent\n" {
		t.Errorf("the restart lost the agent's work: app.go = %q", b)
	}
}
