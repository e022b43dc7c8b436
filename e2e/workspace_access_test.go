package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/runtime/docker"
)

// A 0700 workspace (what mktemp -d makes) that the containers' user cannot
// enter is refused by up with a message that says why, before anything is
// created — instead of every goal failing with "permission denied".
func TestUpRefusesAWorkspaceTheAgentsCannotEnter(t *testing.T) {
	t.Parallel()
	h := setup(t)
	s := newStack(t, h, `version: "1.0"
services:
  containers:
    user: "4242:4242"
agents:
  writer:
    image: sett-example-writer:local
    consumes: ["GoalDefined"]
`)
	if err := os.Chmod(s.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := s.up()
	if !errors.Is(err, docker.ErrInvalidSpec) || !strings.Contains(err.Error(), "cannot read and enter") || !strings.Contains(err.Error(), "services.containers.user") {
		t.Fatalf("up of a 0700 workspace = %v, want ErrInvalidSpec naming the access and the fix", err)
	}
	if left := h.leftovers(t, s.name); len(left) > 0 {
		t.Errorf("the refused up created %v", left)
	}
}

// The containers run as the configured user (by default the user running
// sett up), so an rw agent's files belong to that user, and a 0700
// workspace works when it is that user's.
func TestAgentsWriteFilesAsTheWorkspaceOwner(t *testing.T) {
	t.Parallel()
	h := setup(t)
	s := newStack(t, h, `version: "1.0"
orchestrator:
  bid_timeout: 3s
services:
  containers:
    user: "4242:4243"
agents:
  toucher:
    image: sett-cub:local
    consumes: ["GoalDefined"]
    workspace:
      mode: rw
    command: ["sh", "-c", "cat >/dev/null; echo hi > /workspace/made-by-tool; echo '{\"artefact_type\":\"Done\",\"artefact_payload\":\"ok\",\"summary\":\"ok\"}'"]
`)
	for _, p := range []string{s.dir, s.configPath} {
		if err := os.Chown(p, 4242, 4243); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(s.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.configPath, 0o600); err != nil {
		t.Fatal(err)
	}
	s.mustUp()
	wf := s.postGoal("touch a file")
	if w := s.waitWorkflow(wf, 2*time.Minute); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: %s (%s)", wf, w.Status, w.Outcome)
	}
	st, err := os.Stat(filepath.Join(s.dir, "made-by-tool"))
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if sys.Uid != 4242 || sys.Gid != 4243 {
		t.Errorf("the tool's file belongs to %d:%d, want 4242:4243", sys.Uid, sys.Gid)
	}
	if u := s.container("toucher").Container.Config.User; u != "4242:4243" {
		t.Errorf("container user %q", u)
	}
}
