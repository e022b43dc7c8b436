package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/runtime/docker"
)

// A tool that fails inside its container becomes a Failure artefact
// saying why, and the workflow fails.
func TestToolFailureInContainer(t *testing.T) {
	t.Parallel()
	h := setup(t)
	s := newStack(t, h, `version: "1.0"
orchestrator:
  bid_timeout: 3s
agents:
  planner:
    image: sett-cub:local
    command: ["sh", "-c", "cat >/dev/null; echo 'planner: the disk is on fire' >&2; exit 7"]
    consumes: ["GoalDefined"]
    retry: {max_attempts: 2, backoff: [100ms]}
`)
	s.mustUp()
	wf := s.postGoal("Plan something")
	w := s.waitWorkflow(wf, 2*time.Minute)
	if w.Status != blackboard.WorkflowFailed {
		t.Fatalf("workflow %s: status %s (%s), want failed", wf, w.Status, w.Outcome)
	}
	var failures []*blackboard.Artefact
	for _, a := range s.artefacts(wf) {
		if a.StructuralType == blackboard.StructuralFailure {
			failures = append(failures, a)
		}
	}
	if len(failures) != 2 {
		t.Fatalf("%d Failure artefacts, want one per attempt (2) (all: %v)", len(failures), types(s.artefacts(wf)))
	}
	f := failures[0]
	if f.Type != "ToolExecutionFailure" || f.ProducedByRole != "planner" {
		t.Errorf("failure %s: type %s by %s, want ToolExecutionFailure by planner", f.ID, f.Type, f.ProducedByRole)
	}
	if !strings.Contains(f.Payload, "7") || !strings.Contains(f.Payload, "the disk is on fire") {
		t.Errorf("failure payload does not give the exit code and stderr:\n%s", f.Payload)
	}
}

// A missing image fails Up before anything is created, with a message
// that names the image, the setting and the fix.
func TestBadImageFailsUpAndLeavesNothing(t *testing.T) {
	t.Parallel()
	h := setup(t)
	s := newStack(t, h, `version: "1.0"
agents:
  planner:
    image: sett-e2e-no-such-image:latest
    command: ["sett-writer"]
  reviewer:
    image: sett-example-reviewer:local
`)
	_, err := s.up()
	if err == nil {
		t.Fatal("up succeeded with a missing image")
	}
	t.Logf("up: %v", err)
	if !errors.Is(err, docker.ErrMissingImage) {
		t.Errorf("error %v does not wrap ErrMissingImage", err)
	}
	// A user's image: the hint is to build or load it, not Sett's
	// `make images` (which only builds Sett's own).
	for _, want := range []string{"sett-e2e-no-such-image:latest", "not found locally and cannot be pulled", "agents.planner.image", "docker build -t sett-e2e-no-such-image:latest"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "make images") {
		t.Errorf("error points a user's image at Sett's make images: %v", err)
	}
	if left := h.leftovers(t, s.name); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A component that dies while Up waits fails Up with its exit code and
// log, and Up removes everything it created: containers, network, and
// the volume and password it made for this instance.
func TestCrashingAgentRollsBackUp(t *testing.T) {
	t.Parallel()
	h := setup(t)
	h.buildImage(t, "sett-e2e-crash:local", `FROM sett-cub:local
ENTRYPOINT ["/bin/sh", "-c", "echo 'crashy: cannot start today' >&2; exit 3"]
`)
	s := newStack(t, h, `version: "1.0"
agents:
  planner:
    image: sett-example-writer:local
    command: ["sett-writer"]
  crashy:
    image: sett-e2e-crash:local
    command: ["true"]
`)
	_, err := s.up()
	if err == nil {
		t.Fatal("up succeeded with an agent that cannot start")
	}
	t.Logf("up: %v", err)
	if !errors.Is(err, docker.ErrNotReady) {
		t.Errorf("error %v does not wrap ErrNotReady", err)
	}
	for _, want := range []string{"agent crashy", "3", "crashy: cannot start today"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if left := h.leftovers(t, s.name); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(s.dir, ".sett", "docker", s.name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state directory this Up created is still there (%v)", err)
	}
}
