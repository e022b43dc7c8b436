package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
	"github.com/settdev/sett/internal/vault"
)

// goalsOfFile counts the goals a vault task file started.
func goalsOfFile(t *testing.T, s *stacktest.Stack, name string) int {
	t.Helper()
	ctx := context.Background()
	page, err := s.BB.ListArtefacts(ctx, blackboard.PageQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	arts, err := s.BB.GetArtefacts(ctx, page.IDs)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range arts {
		if a != nil && a.IsGoal() && a.Metadata["vault_file"] == name {
			n++
		}
	}
	return n
}

// outcomeOf is the `## Outcome` section of a task file's body.
func outcomeOf(body string) string {
	if i := strings.Index(body, "## Outcome"); i >= 0 {
		return body[i:]
	}
	return ""
}

// wantRewrittenOutcome checks a task file that failed, was retried and
// completed: one Outcome section, the new one, and no second workflow.
func wantRewrittenOutcome(t *testing.T, s *stacktest.Stack, name, wf string, d *vault.Doc) {
	t.Helper()
	if d.Get("workflow_id") != wf || d.Get("outcome") != "completed" || d.Get("state") != vault.StateDone {
		t.Errorf("%s after the retry: %v, want workflow %s completed", name, d.Map(), wf)
	}
	if n := strings.Count(d.Body, "## Outcome"); n != 1 {
		t.Errorf("%s has %d Outcome sections, want 1 (rewritten, not appended):\n%s", name, n, d.Body)
	}
	if out := outcomeOf(d.Body); !strings.HasPrefix(out, "## Outcome\n\ncompleted") || strings.Contains(out, "failed") {
		t.Errorf("%s outcome not rewritten:\n%s", name, out)
	}
	if !strings.Contains(d.Body, "Write the note for "+name) {
		t.Errorf("%s lost the person's text:\n%s", name, d.Body)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "vault", vault.Failed, name)); err == nil {
		t.Errorf("%s is still in Failed/ too", name)
	}
	if n := goalsOfFile(t, s, name); n != 1 {
		t.Errorf("%s started %d workflows, want exactly 1 (a retry is the same workflow)", name, n)
	}
	w, err := s.BB.GetWorkflow(context.Background(), wf)
	if err != nil || w.Status != blackboard.WorkflowCompleted {
		t.Errorf("workflow %s: %+v %v, want completed", wf, w, err)
	}
}

// TestVaultRetryThreeWays: a task whose tool fails (no attempts left)
// ends in Failed/; it is retried from the CLI (`sett retry`), by moving
// the file back into Needs_Action/ as a file manager does, and by
// setting `retry: true` in it. Each time the same workflow runs again,
// the file comes back to In_Progress/ and ends in Done/ with its outcome
// rewritten, and the task started exactly one workflow.
func TestVaultRetryThreeWays(t *testing.T) {
	t.Parallel()
	// Odd runs fail, even runs succeed: each task fails once, and its
	// retry succeeds. The tasks run one after the other.
	worker := `["sh", "-c", "n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; if [ $((n % 2)) -eq 1 ]; then echo disk full >&2; exit 1; fi; exec sett-writer --type Note"]`
	cfg := `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 3s}
vault: {path: vault, rescan_interval: 1s, settle: 300ms}
agents:
  worker: {command: ` + worker + `, bidding_strategy: exclusive, consumes: ["GoalDefined"], retry: {max_attempts: 1}}
`
	s := stacktest.New(t, cfg)
	s.Up("worker")
	waitVaultFile(t, s, "Dashboard.md", nil)
	vaultDir := filepath.Join(s.Dir, "vault")

	ways := []struct {
		name  string
		retry func(path, wf string)
	}{
		{"cli.md", func(_, wf string) { settCLI(t, s, "retry", wf) }},
		{"moved.md", func(path, _ string) {
			if err := os.Rename(path, filepath.Join(vaultDir, vault.NeedsAction, filepath.Base(path))); err != nil {
				t.Fatal(err)
			}
		}},
		{"flagged.md", func(path, _ string) { editDoc(t, path, func(d *vault.Doc) { d.Set("retry", "true") }) }},
	}
	for _, w := range ways {
		// Written in place, as an editor saves a new note.
		write(t, filepath.Join(vaultDir, vault.NeedsAction, w.name), "---\npriority: high\n---\nWrite the note for "+w.name+"\n")
		path, failed := waitVaultFile(t, s, "Failed/"+w.name, nil)
		wf := failed.Get("workflow_id")
		if failed.Get("outcome") != "failed" || !strings.Contains(outcomeOf(failed.Body), "failed") {
			t.Fatalf("%s before the retry: %v\n%s", w.name, failed.Map(), failed.Body)
		}
		w.retry(path, wf)
		_, done := waitVaultFile(t, s, "Done/"+w.name, forWorkflow(wf))
		wantRewrittenOutcome(t, s, w.name, wf, done)
		if done.Has("retry") {
			t.Errorf("%s still asks for a retry: %v", w.name, done.Map())
		}
	}
}

// TestVaultLateDecisionCompletes: approvals nobody decided in time move
// to Needs_Human_Review/ and their tasks to Failed/. A late decision is
// accepted and resumes the work: moving the item to Approved/ (a file
// manager's rename), `sett approve` from a terminal, and moving it back
// to Needs_Action/ (asked again, then approved in Pending_Approval/).
// Each task then completes in Done/ with its outcome rewritten, on its
// one workflow.
func TestVaultLateDecisionCompletes(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, vaultConfig("", ""))
	s.Up("planner", "coder")
	waitVaultFile(t, s, "Dashboard.md", nil)
	vaultDir := filepath.Join(s.Dir, "vault")
	names := []string{"moved.md", "cli.md", "asked.md"}
	wfs := map[string]string{}
	items := map[string]string{}
	for _, n := range names {
		write(t, filepath.Join(vaultDir, vault.NeedsAction, n), "---\napproval_timeout: 1s\n---\nWrite the note for "+n+"\n")
	}
	for _, n := range names {
		_, f := waitVaultFile(t, s, "Failed/"+n, nil)
		wfs[n] = f.Get("workflow_id")
		p, hr := waitVaultFile(t, s, "Needs_Human_Review/*.md", forWorkflow(wfs[n]))
		if hr.Get("approval_status") != "expired" {
			t.Fatalf("%s's approval after the timeout: %v", n, hr.Map())
		}
		items[n] = p
	}

	// Late, by moving the item to Approved/.
	if err := os.Rename(items["moved.md"], filepath.Join(vaultDir, vault.Approved, filepath.Base(items["moved.md"]))); err != nil {
		t.Fatal(err)
	}
	// Late, from a terminal.
	data, err := os.ReadFile(items["cli.md"])
	if err != nil {
		t.Fatal(err)
	}
	d, err := vault.ParseDoc(data)
	if err != nil {
		t.Fatal(err)
	}
	settCLI(t, s, "approve", d.Get("artefact_id"), "--by", "ana")
	// Asked again: back into Needs_Action/, then approved where it waits.
	if err := os.Rename(items["asked.md"], filepath.Join(vaultDir, vault.NeedsAction, filepath.Base(items["asked.md"]))); err != nil {
		t.Fatal(err)
	}
	pending, _ := waitVaultFile(t, s, "Pending_Approval/*.md", forWorkflow(wfs["asked.md"]))
	if err := os.Rename(pending, filepath.Join(vaultDir, vault.Approved, filepath.Base(pending))); err != nil {
		t.Fatal(err)
	}

	for _, n := range names {
		_, done := waitVaultFile(t, s, "Done/"+n, forWorkflow(wfs[n]))
		wantRewrittenOutcome(t, s, n, wfs[n], done)
		_, ap := waitVaultFile(t, s, "Approved/*.md", func(d *vault.Doc) bool {
			return d.Get("workflow_id") == wfs[n] && d.Get("decided_at") != ""
		})
		if ap.Get("approval_status") != "approved" {
			t.Errorf("%s's approval item: %v", n, ap.Map())
		}
	}
	if m, _ := filepath.Glob(filepath.Join(vaultDir, vault.NeedsHumanReview, "*.md")); len(m) != 0 {
		t.Errorf("still in Needs_Human_Review/: %v", m)
	}
}

// write writes a file in place, as an editor saving a new note does (no
// rename).
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRetryAsksATimedOutApprovalAgain: `sett retry` of a workflow that
// failed because nobody decided its approval in time asks for the
// approval again (no timeout this time); deciding it completes the
// workflow.
func TestRetryAsksATimedOutApprovalAgain(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, approvalConfig("  timeout: 1s", "", ""))
	s.Up("planner", "coder")
	wf := s.PostGoal("Plan the offsite")
	req := waitPending(t, s, wf, 1)
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowFailed {
		t.Fatalf("workflow %s, want failed by the timeout", w.Status)
	}
	out := settCLI(t, s, "retry", wf)
	if !strings.Contains(out, "waits for approval again") {
		t.Errorf("sett retry said:\n%s", out)
	}
	again := waitPending(t, s, wf, 1)
	if again.ArtefactID != req.ArtefactID || again.ExpiresAtMs != 0 {
		t.Errorf("asked again: %+v, want the same artefact with no timeout", again)
	}
	settCLI(t, s, "approve", req.ArtefactID)
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Errorf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
}
