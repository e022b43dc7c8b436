package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/cli"
	"github.com/settdev/sett/internal/stacktest"
)

// settCLIErr runs `sett args...` in process and returns its output and
// error.
func settCLIErr(t *testing.T, s *stacktest.Stack, args ...string) (string, error) {
	t.Helper()
	var out, errOut strings.Builder
	env := map[string]string{"SETT_REDIS_URL": s.Redis.URL(), "SETT_INSTANCE": s.Instance}
	app := &cli.App{In: strings.NewReader(""), Out: &out, Err: &errOut, Dir: s.Dir, Now: time.Now,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	root := cli.NewRoot(app)
	root.SetArgs(append([]string{"--no-color"}, args...))
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

// TestRetryCommandRerunsAFailedClaim: a tool that fails three times
// exhausts max_attempts 3 and fails its workflow; `sett errors` lists the
// workflow and the claim with its attempts; `sett retry` reopens both with
// a fresh budget, the fourth run succeeds and the workflow completes with
// every Failure kept. A second retry, or one of a claim that did not fail,
// is refused with a message.
func TestRetryCommandRerunsAFailedClaim(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, retryConfig(flaky(3, "echo broken >&2; exit 1"), ""))
	s.Up("worker")
	wf := s.PostGoal("fail three times, then succeed")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowFailed {
		t.Fatalf("workflow %s (%s), want failed", w.Status, w.Outcome)
	}
	var rep struct {
		FailedWorkflows []struct {
			WorkflowID string `json:"workflow_id"`
			Reason     string `json:"reason"`
		} `json:"failed_workflows"`
		FailedClaims []struct {
			ClaimID    string `json:"claim_id"`
			WorkflowID string `json:"workflow_id"`
			Agents     []struct {
				Agent    string `json:"agent"`
				Attempts int    `json:"attempts"`
			} `json:"agents"`
		} `json:"failed_claims"`
	}
	if err := json.Unmarshal([]byte(settCLI(t, s, "errors", "-o", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.FailedWorkflows) != 1 || rep.FailedWorkflows[0].WorkflowID != wf || !strings.Contains(rep.FailedWorkflows[0].Reason, "3 attempt(s)") {
		t.Fatalf("failed workflows %+v, want %s after 3 attempts", rep.FailedWorkflows, wf)
	}
	if len(rep.FailedClaims) != 1 || rep.FailedClaims[0].WorkflowID != wf || len(rep.FailedClaims[0].Agents) != 1 ||
		rep.FailedClaims[0].Agents[0].Agent != "worker" || rep.FailedClaims[0].Agents[0].Attempts != 3 {
		t.Fatalf("failed claims %+v, want worker's claim with 3 attempts", rep.FailedClaims)
	}
	claim := rep.FailedClaims[0].ClaimID
	text := settCLI(t, s, "errors")
	for _, want := range []string{"Failed workflows (1)", "Failed claims (1)", "worker (3)", "sett retry"} {
		if !strings.Contains(text, want) {
			t.Errorf("sett errors lacks %q:\n%s", want, text)
		}
	}

	out := settCLI(t, s, "retry", wf[:8])
	if !strings.Contains(out, "fresh attempt budget") || !strings.Contains(out, "runs again") {
		t.Errorf("retry output:\n%s", out)
	}
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("after the retry the workflow is %s (%s), want completed", w.Status, w.Outcome)
	}
	arts := s.Artefacts(wf)
	notes := stacktest.OfType(arts, "Note")
	if len(notes) != 1 || notes[0].Metadata["attempt"] != "1" {
		t.Fatalf("notes %+v, want one written by attempt 1 of the fresh budget", notes)
	}
	if n := len(failuresOf(arts)); n != 3 {
		t.Errorf("%d Failure artefacts, want the 3 earlier attempts kept", n)
	}
	if n := len(s.Events(blackboard.EventWorkflowReopened)); n != 1 {
		t.Errorf("%d workflow_reopened events, want 1", n)
	}
	// The claim is complete now: nothing to retry, said plainly.
	if _, err := settCLIErr(t, s, "retry", claim); err == nil || !strings.Contains(err.Error(), "cannot be retried: it is complete") {
		t.Errorf("retrying a completed claim: %v", err)
	}
	if _, err := settCLIErr(t, s, "retry", wf); err == nil || !strings.Contains(err.Error(), "has no failed claim") {
		t.Errorf("retrying a completed workflow: %v", err)
	}
	if err := json.Unmarshal([]byte(settCLI(t, s, "errors", "-o", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.FailedWorkflows)+len(rep.FailedClaims) != 0 {
		t.Errorf("errors after the retry: %+v", rep)
	}
}
