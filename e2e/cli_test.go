package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/stacktest"
)

// The user's path through the real sett binary on Docker: up, forage
// --wait through a feedback loop, hoard as a tree, list, logs, down
// --purge.
func TestCLIOnDocker(t *testing.T) {
	t.Parallel()
	h := setup(t)
	bin := stacktest.BuildCLI(t)
	if bin.Sett == "" {
		t.Fatal("cmd/sett is missing")
	}
	s := newStack(t, h, `version: "1.0"
orchestrator:
  bid_timeout: 3s
agents:
  planner:
    image: sett-example-writer:local
    command: ["sett-writer", "--type", "Plan"]
    consumes: ["GoalDefined"]
  reviewer:
    image: sett-example-reviewer:local
    command: ["sett-reviewer", "--require", "tests"]
    bidding_strategy: review
    consumes: ["Plan"]
`)
	state := t.TempDir() // the user-level instance index, private to the test
	sett := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(bin.Sett, append([]string{"--no-color", "--name", s.name}, args...)...)
		cmd.Dir = s.dir
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "NO_COLOR=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		t.Logf("$ sett %s\n%s", strings.Join(args, " "), out.String())
		return out.String(), err
	}

	if out, err := sett("up", "--runtime", "docker"); err != nil {
		if strings.Contains(out, "not available") {
			t.Fatalf("sett up --runtime docker: the docker runtime is not registered in internal/cli/runtimes.go (docker.New(docker.Options{})): %v", err)
		}
		t.Fatalf("sett up: %v", err)
	}
	out, err := sett("forage", "--goal", "Add a /health endpoint", "--wait", "--timeout", "2m")
	if err != nil || !strings.Contains(out, "completed") {
		t.Fatalf("sett forage --wait: %v", err)
	}
	m := regexp.MustCompile(`(?m)^workflow +([0-9a-f-]{36})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no workflow id in the output of forage")
	}
	tree, err := sett("hoard", "--workflow", m[1], "-o", "tree")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Plan v1 → v2", "reject", "approve"} {
		if !strings.Contains(tree, want) {
			t.Errorf("the audit tree lacks %q", want)
		}
	}
	out, err = sett("list", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var listed []runtime.Listing
	if err := json.Unmarshal([]byte(out[strings.Index(out, "["):]), &listed); err != nil {
		t.Fatalf("sett list -o json: %v", err)
	}
	found := false
	for _, l := range listed {
		found = found || (l.Name == s.name && l.Runtime == "docker" && l.Status == "running")
	}
	if !found {
		t.Errorf("sett list does not show %s running on docker", s.name)
	}
	if out, err := sett("logs", "planner"); err != nil || !strings.Contains(out, "cub starting") {
		t.Errorf("sett logs planner: %v", err)
	}
	if _, err := sett("down", "--purge"); err != nil {
		t.Fatal(err)
	}
	if left := h.leftovers(t, s.name); len(left) > 0 {
		t.Errorf("after sett down --purge: %v", left)
	}
}
