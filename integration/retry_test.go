package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// flaky fails its first `fails` runs (counted in a file of the workspace)
// and then writes a Note.
func flaky(fails int, failure string) string {
	return `["sh", "-c", "n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; if [ $n -le ` +
		string(rune('0'+fails)) + ` ]; then ` + failure + `; fi; exec sett-writer --type Note"]`
}

func retryConfig(worker, extra string) string {
	return `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 3s}
` + extra + `
agents:
  worker: {command: ` + worker + `, bidding_strategy: exclusive, consumes: ["GoalDefined"], retry: {max_attempts: 3, backoff: [100ms]}}
`
}

func failuresOf(arts []*blackboard.Artefact) []*blackboard.Artefact {
	var out []*blackboard.Artefact
	for _, a := range arts {
		if a.StructuralType == blackboard.StructuralFailure {
			out = append(out, a)
		}
	}
	return out
}

func TestRetryAfterTransientFailures(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, retryConfig(flaky(2, "echo flaky >&2; exit 1"), ""))
	s.Up("worker")
	wf := s.PostGoal("succeed on the third try")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	arts := s.Artefacts(wf)
	notes := stacktest.OfType(arts, "Note")
	if len(notes) != 1 || notes[0].Metadata["attempt"] != "3" || notes[0].Metadata["max_attempts"] != "3" {
		t.Fatalf("notes %+v, want one written by attempt 3 of 3", notes)
	}
	fails := failuresOf(arts)
	if len(fails) != 2 {
		t.Fatalf("%d Failure artefacts, want one per failed attempt (2)", len(fails))
	}
	for i, f := range fails {
		if f.Metadata["attempt"] != string(rune('1'+i)) || f.Metadata["max_attempts"] != "3" || f.Metadata["exit_code"] != "1" {
			t.Errorf("failure %d metadata %v, want attempt %d of 3, exit code 1", i+1, f.Metadata, i+1)
		}
	}
	if n := len(s.Events(blackboard.EventRetryScheduled)); n != 2 {
		t.Errorf("%d retry_scheduled events, want 2", n)
	}
}

func TestRetryExhaustionEscalates(t *testing.T) {
	t.Parallel()
	hookOut := filepath.Join(t.TempDir(), "escalated.json")
	hook := `escalation: {command: ["sh", "-c", "cat > ` + hookOut + `"], timeout: 5s}`
	s := stacktest.New(t, retryConfig(flaky(9, "echo broken >&2; exit 2"), hook))
	s.Up("worker")
	wf := s.PostGoal("never succeed")
	w := s.WaitWorkflow(wf, wait)
	if w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, "agent worker failed (3 attempt(s))") {
		t.Fatalf("workflow %s (%q), want failed after 3 attempts", w.Status, w.Outcome)
	}
	fails := failuresOf(s.Artefacts(wf))
	if len(fails) != 3 {
		t.Fatalf("%d Failure artefacts, want 3", len(fails))
	}
	cl, err := s.BB.GetClaim(context.Background(), blackboard.DeriveID("claim", wf))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fails {
		if !strings.Contains(cl.TerminationReason, f.ID) {
			t.Errorf("termination reason %q does not list failure %s", cl.TerminationReason, f.ID)
		}
	}
	esc := s.WaitEvent(blackboard.EventWorkflowEscalated, nil, wait)
	if esc.WorkflowID != wf || esc.Agent != "worker" {
		t.Errorf("workflow_escalated %+v", esc)
	}
	var doc map[string]any
	s.Eventually(wait, "the escalation hook to receive the event", func() bool {
		b, err := os.ReadFile(hookOut)
		return err == nil && json.Unmarshal(b, &doc) == nil
	})
	if doc["type"] != "workflow_escalated" || doc["workflow_id"] != wf || !strings.Contains(doc["reason"].(string), "worker failed") {
		t.Errorf("hook received %v", doc)
	}
}

func TestRetryableFalseIsNotRetried(t *testing.T) {
	t.Parallel()
	failure := `echo '{\"error\": \"the account is closed\", \"retryable\": false}'; exit 1`
	s := stacktest.New(t, retryConfig(flaky(9, failure), ""))
	s.Up("worker")
	wf := s.PostGoal("fail for good")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowFailed {
		t.Fatalf("workflow %s (%s), want failed", w.Status, w.Outcome)
	}
	fails := failuresOf(s.Artefacts(wf))
	if len(fails) != 1 || fails[0].Metadata["retryable"] != "false" || !strings.Contains(fails[0].Payload, "the account is closed") {
		t.Fatalf("failures %+v, want exactly one, permanent, quoting the tool", fails)
	}
	if n := len(s.Events(blackboard.EventRetryScheduled)); n != 0 {
		t.Errorf("%d retries scheduled for a permanent failure", n)
	}
}

// TestRetrySurvivesAnOrchestratorCrash kills the orchestrator while a
// retry waits for its backoff: the next one grants it, once.
func TestRetrySurvivesAnOrchestratorCrash(t *testing.T) {
	t.Parallel()
	config := `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 3s}
agents:
  worker: {command: ` + flaky(1, "exit 1") + `, bidding_strategy: exclusive, consumes: ["GoalDefined"], retry: {max_attempts: 3, backoff: [2s]}}
`
	s := stacktest.New(t, config)
	orch, _ := s.Up("worker")
	wf := s.PostGoal("crash during the backoff")
	s.WaitEvent(blackboard.EventRetryScheduled, func(e blackboard.Event) bool { return e.WorkflowID == wf }, wait)
	orch.Kill()
	orch.Restart()
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	if n := len(s.Events(blackboard.EventRetryGranted)); n != 1 {
		t.Errorf("%d retry grants, want exactly 1", n)
	}
	if notes := stacktest.OfType(s.Artefacts(wf), "Note"); len(notes) != 1 {
		t.Errorf("%d notes, want 1", len(notes))
	}
}
