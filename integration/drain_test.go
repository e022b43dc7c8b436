package integration

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// TestCubDrainsOnSIGTERM sends a real SIGTERM to a real cub while its tool
// runs (a rollout or a node drain): the cub takes no new work, keeps the
// lease renewed while the tool goes on for more than two lease TTLs, the
// tool's result is stored under the first grant (no attempt lost, no
// lease_lost event), and the cub then exits cleanly.
func TestCubDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	// The tool says it started, waits for the test to say the cub got its
	// SIGTERM, then works for 5 s (2.5 lease TTLs) before answering.
	tool := `["sh", "-c", "touch started; while [ ! -f signalled ]; do sleep 0.05; done; sleep 5; exec sett-writer --type Note"]`
	s := stacktest.New(t, `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 2s}
agents:
  worker: {command: `+tool+`, bidding_strategy: exclusive, consumes: ["GoalDefined"], drain_timeout: 30s}
`)
	_, cubs := s.Up("worker")
	cub := cubs["worker"]
	wf := s.PostGoal("finish while the cub drains")
	s.Eventually(wait, "the tool to start", func() bool {
		_, err := os.Stat(filepath.Join(s.Dir, "started"))
		return err == nil
	})
	cub.Signal(syscall.SIGTERM)
	s.Eventually(wait, "the cub to start draining", func() bool {
		b, _ := os.ReadFile(cub.LogPath)
		return strings.Contains(string(b), "taking no new work")
	})
	if err := os.WriteFile(filepath.Join(s.Dir, "signalled"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		s.DumpLogs()
		t.Fatalf("workflow %s (%s), want completed by the draining cub", w.Status, w.Outcome)
	}
	notes := stacktest.OfType(s.Artefacts(wf), "Note")
	if len(notes) != 1 || notes[0].Metadata["attempt"] != "1" {
		t.Fatalf("notes %+v, want one, written by attempt 1", notes)
	}
	if n := len(s.Events(blackboard.EventLeaseLost)); n != 0 {
		t.Errorf("%d lease_lost events, want none: the draining cub kept its lease", n)
	}
	if code := cub.WaitExit(wait); code != 0 {
		t.Errorf("the cub exited with %d after draining, want 0", code)
	}
	b, _ := os.ReadFile(cub.LogPath)
	if !strings.Contains(string(b), "drained: every running tool finished") {
		t.Errorf("the cub's log does not report the drain:\n%s", b)
	}
}

// TestCubHandsBackWhenItsDrainRunsOut sends SIGTERM to a cub whose tool
// cannot finish within the drain (a rollout with a short grace): the cub
// stops the tool and hands the grant back, and a second replica runs the
// work under the same attempt — no lease_lost, no attempt spent, one
// result.
func TestCubHandsBackWhenItsDrainRunsOut(t *testing.T) {
	t.Parallel()
	// The first run blocks until stopped; any later run answers at once.
	tool := `["sh", "-c", "if [ -f started ]; then exec sett-writer --type Note; fi; touch started; sleep 300"]`
	s := stacktest.New(t, `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 2s}
agents:
  worker: {command: `+tool+`, bidding_strategy: exclusive, consumes: ["GoalDefined"], drain_timeout: 1s}
`)
	_, cubs := s.Up("worker")
	first := cubs["worker"]
	wf := s.PostGoal("handed back by the draining cub")
	s.Eventually(wait, "the tool to start", func() bool {
		_, err := os.Stat(filepath.Join(s.Dir, "started"))
		return err == nil
	})
	second := s.StartReplica("worker", "b")
	s.WaitReady(second)
	first.Signal(syscall.SIGTERM)
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		s.DumpLogs()
		t.Fatalf("workflow %s (%s), want completed by the second replica", w.Status, w.Outcome)
	}
	if code := first.WaitExit(wait); code != 0 {
		t.Errorf("the draining cub exited with %d, want 0", code)
	}
	if n := len(stacktest.OfType(s.Artefacts(wf), "Note")); n != 1 {
		t.Errorf("%d notes, want 1", n)
	}
	if n := len(s.Events(blackboard.EventLeaseLost)); n != 0 {
		t.Errorf("%d lease_lost events, want none: the grant was handed back, not lost", n)
	}
	if n := len(s.Events(blackboard.EventGrantHandedBack)); n != 1 {
		t.Errorf("%d grant_handed_back events, want 1", n)
	}
	for _, cl := range s.Claims(wf) {
		if cl.GrantedExclusiveAgent != "worker" {
			continue // the Note's claim, which nobody consumes
		}
		if cl.Attempts != 1 || cl.HandBacks != 1 {
			t.Errorf("claim %s: attempts %d, hand-backs %d; want 1 and 1 (the hand-back costs no attempt)", cl.ID, cl.Attempts, cl.HandBacks)
		}
	}
	b, _ := os.ReadFile(first.LogPath)
	if !strings.Contains(string(b), "grant handed back unfinished") {
		t.Errorf("the draining cub's log does not report the hand-back:\n%s", b)
	}
}
