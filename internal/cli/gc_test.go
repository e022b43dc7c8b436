package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

func TestGCDryRunThenPass(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := t.Context()
	// 1ms: every workflow that ended is past its retention at once.
	cfg := "version: \"1.0\"\nretention:\n  workflows: 1ms\n  consumer_idle: 0\nagents:\n  coder:\n    command: [\"sett-writer\"]\n"
	if err := os.WriteFile(filepath.Join(e.app.Dir, "sett.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	running := blackboard.NewGoal("running", 0, "user", nil)
	done := blackboard.NewGoal("finished", 0, "user", nil)
	for _, g := range []*blackboard.Artefact{running, done} {
		if err := e.bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.bb.EndWorkflow(ctx, done.ID, blackboard.WorkflowCompleted, "ok", 1); err != nil {
		t.Fatal(err)
	}
	// The ended_at_ms stamp and the cutoff share Redis's ms clock; wait
	// (polling, not sleeping) until the workflow is 1ms old.
	for {
		var v gcView
		if err := json.Unmarshal([]byte(e.mustRun(t, "gc", "--dry-run", "-o", "json")), &v); err != nil {
			t.Fatal(err)
		}
		if !v.DryRun {
			t.Fatalf("dry_run = false in %+v", v)
		}
		if len(v.Workflows) == 1 {
			if v.Workflows[0] != done.ID || v.Keys == 0 {
				t.Fatalf("dry run = %+v, want %s with its keys", v, done.ID)
			}
			break
		}
		if len(v.Workflows) != 0 || ctx.Err() != nil {
			t.Fatalf("dry run = %+v, want only %s", v, done.ID)
		}
	}
	if _, err := e.bb.GetWorkflow(ctx, done.ID); err != nil {
		t.Fatalf("the dry run deleted the workflow: %v", err)
	}
	out := e.mustRun(t, "gc")
	if !strings.Contains(out, "removed 1 finished workflows") || !strings.Contains(out, done.ID) {
		t.Errorf("gc printed:\n%s", out)
	}
	if _, err := e.bb.GetWorkflow(ctx, done.ID); !errors.Is(err, blackboard.ErrNotFound) {
		t.Errorf("finished workflow: %v, want deleted", err)
	}
	if _, err := e.bb.GetWorkflow(ctx, running.ID); err != nil {
		t.Errorf("running workflow: %v, want kept", err)
	}
}
