package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
	"github.com/settdev/sett/internal/vault"
)

// vaultConfig is approvalConfig with a vault in the workspace's vault/
// folder; vaultExtra is added to the vault block (settle 300ms unless it
// sets one).
func vaultConfig(approvals, vaultExtra string) string {
	if !strings.Contains(vaultExtra, "settle:") {
		vaultExtra += "  settle: 300ms\n"
	}
	return approvalConfig(approvals, "", "") + `
vault:
  path: vault
  rescan_interval: 1s
  max_concurrent_tasks: 0
` + vaultExtra
}

// drop puts a task file in the vault's Needs_Action/ the way a person's
// editor or a watcher does: written elsewhere, then renamed in.
func drop(t *testing.T, s *stacktest.Stack, name, content string) {
	t.Helper()
	tmp := filepath.Join(s.Dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, "vault", vault.NeedsAction, name)); err != nil {
		t.Fatal(err)
	}
}

// vaultFile waits for a file matching glob (relative to the vault) and
// returns its path and parsed content.
func waitVaultFile(t *testing.T, s *stacktest.Stack, glob string, cond func(*vault.Doc) bool) (string, *vault.Doc) {
	t.Helper()
	var path string
	var doc *vault.Doc
	s.Eventually(wait, "vault file "+glob, func() bool {
		matches, _ := filepath.Glob(filepath.Join(s.Dir, "vault", glob))
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err != nil {
				continue
			}
			d, err := vault.ParseDoc(data)
			if err != nil {
				continue
			}
			if cond == nil || cond(d) {
				path, doc = m, d
				return true
			}
		}
		return false
	})
	return path, doc
}

func readVault(t *testing.T, s *stacktest.Stack, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.Dir, "vault", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// editDoc rewrites a vault file with change applied to its frontmatter.
func editDoc(t *testing.T, path string, change func(*vault.Doc)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := vault.ParseDoc(data)
	if err != nil {
		t.Fatal(err)
	}
	change(d)
	if err := os.WriteFile(path, d.Render(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// moveTo moves a vault file to another folder (a person dragging it).
func moveTo(t *testing.T, s *stacktest.Stack, path, folder string) string {
	t.Helper()
	to := filepath.Join(s.Dir, "vault", folder, filepath.Base(path))
	if err := os.Rename(path, to); err != nil {
		t.Fatal(err)
	}
	return to
}

func forWorkflow(wf string) func(*vault.Doc) bool {
	return func(d *vault.Doc) bool { return d.Get("workflow_id") == wf }
}

// TestVaultSeed000 is the learning loop end to end through the vault: a task file
// becomes a plan waiting in Pending_Approval/, the person moves it to
// Rejected/ with a reason, the learning lands in Agent_Memory.md, the
// reviewed files end in Done/ with status rejected_reviewed, and the next
// task's plan was written with the learning in its tool input.
func TestVaultSeed000(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, vaultConfig("", ""))
	s.Up("planner", "coder")
	ctx := context.Background()
	_, task := waitVaultFile(t, s, "Dashboard.md", nil) // the bridge scaffolded the vault
	_ = task
	drop(t, s, "invoice-99.md", "---\npriority: high\nfrom: client@example.com\nsubject: \"Invoice #99\"\n---\nAnswer the client about invoice #99.\n")
	inProgress, doc := waitVaultFile(t, s, "In_Progress/invoice-99.md", nil)
	wf := doc.Get("workflow_id")
	if wf == "" || doc.Get("started_at") == "" || doc.Get("state") == "" {
		t.Fatalf("task in progress without workflow_id, state, started_at: %v", doc.Map())
	}
	goal, err := s.BB.GetArtefact(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	if goal.Type != blackboard.GoalType || goal.Metadata["subject"] != "Invoice #99" || goal.Metadata["priority"] != "high" || goal.Priority != 10 ||
		!strings.Contains(goal.Payload, "invoice #99") {
		t.Fatalf("goal %+v", goal)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "vault", vault.NeedsAction, "invoice-99.md")); !os.IsNotExist(err) {
		t.Errorf("the task file is still in Needs_Action/ (%v)", err)
	}
	pending, pdoc := waitVaultFile(t, s, "Pending_Approval/*.md", forWorkflow(wf))
	if pdoc.Get("approval_status") != "pending" || pdoc.Get("type") != "Plan" || pdoc.Get("version") != "1" ||
		pdoc.Get("expires_at") == "" || !strings.Contains(pdoc.Body, "## How to decide") {
		t.Fatalf("approval file %s: %v\n%s", pending, pdoc.Map(), pdoc.Body)
	}
	_, tdoc := waitVaultFile(t, s, "In_Progress/invoice-99.md", func(d *vault.Doc) bool { return d.Get("state") == vault.StateAwaitingApproval })
	_ = tdoc
	s.Eventually(wait, "the dashboard listing the pending approval", func() bool {
		return strings.Contains(readVault(t, s, "Dashboard.md"), filepath.Base(pending))
	})

	reason := "Don't offer payment timeline commitments without checking accounting first."
	editDoc(t, pending, func(d *vault.Doc) { d.Set("reason", reason); d.Set("decided_by", "erin") })
	moveTo(t, s, pending, vault.Rejected)

	want := `Rejected plan for "Invoice #99": ` + reason
	s.Eventually(wait, "the learning in Agent_Memory.md", func() bool {
		return strings.Contains(readVault(t, s, vault.AgentMemoryFile), want)
	})
	mem := readVault(t, s, vault.AgentMemoryFile)
	if !strings.HasPrefix(mem, "# Agent Memory\n") || !strings.Contains(mem, "## Patterns") || !strings.Contains(mem, "- **") {
		t.Errorf("Agent_Memory.md is not in the learning loop's form:\n%s", mem)
	}
	_, done := waitVaultFile(t, s, "Done/"+filepath.Base(pending), nil)
	if done.Get("status") != vault.StatusRejectedReviewed || done.Get("approval_status") != "rejected" ||
		done.Get("decided_by") != "erin" || done.Get("channel") != "vault_move" {
		t.Errorf("reviewed approval file: %v", done.Map())
	}
	_, doneTask := waitVaultFile(t, s, "Done/invoice-99.md", nil)
	if doneTask.Get("status") != vault.StatusRejectedReviewed || doneTask.Get("state") != vault.StateRejected || doneTask.Get("outcome") != "rejected" {
		t.Errorf("finished task: %v", doneTask.Map())
	}
	if _, err := os.Stat(inProgress); !os.IsNotExist(err) {
		t.Errorf("the task is still in In_Progress/ (%v)", err)
	}
	hr := stacktest.OfType(s.Artefacts(wf), "HumanReview")
	if len(hr) != 1 || hr[0].Metadata["channel"] != "vault_move" || hr[0].Metadata["decided_by"] != "erin" || hr[0].Payload != reason {
		t.Errorf("human review %+v", hr)
	}

	drop(t, s, "supplier.md", "---\nsubject: Supplier reply\n---\nReply to the supplier.\n")
	_, next := waitVaultFile(t, s, "In_Progress/supplier.md", nil)
	npath, npdoc := waitVaultFile(t, s, "Pending_Approval/*.md", forWorkflow(next.Get("workflow_id")))
	plan, err := s.BB.GetArtefact(ctx, npdoc.Get("artefact_id"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.Payload, want) {
		t.Errorf("the next plan's tool input did not carry the learning %q:\n%s", want, plan.Payload)
	}
	if !strings.Contains(npdoc.Body, want) {
		t.Errorf("the next approval file does not show the plan's payload:\n%s", npdoc.Body)
	}

	// The vault is a projection: with its files gone, a rebuild brings
	// them back from Redis (the person's own lines in Agent_Memory.md
	// kept).
	root := filepath.Join(s.Dir, "vault")
	if err := os.WriteFile(filepath.Join(root, vault.AgentMemoryFile), []byte("# Agent Memory\n\nMy own note.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{vault.DashboardFile, filepath.Join(vault.PendingApproval, filepath.Base(npath))} {
		if err := os.Remove(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	br := vault.NewBridge(s.BB, vault.Options{Path: root}, zerolog.Nop())
	if err := br.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	mem = readVault(t, s, vault.AgentMemoryFile)
	if !strings.Contains(mem, "My own note.") || !strings.Contains(mem, want) {
		t.Errorf("Agent_Memory.md after a rebuild:\n%s", mem)
	}
	if dash := readVault(t, s, vault.DashboardFile); !strings.Contains(dash, "## Pending approvals") || !strings.Contains(dash, filepath.Base(npath)) {
		t.Errorf("Dashboard.md after a rebuild:\n%s", dash)
	}
}

// TestVaultApproveThreeWays approves one plan by moving its file, one by
// editing approval_status and one from the CLI; each workflow completes
// and its task ends in Done/ with the final artefact's payload.
func TestVaultApproveThreeWays(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, vaultConfig("", ""))
	s.Up("planner", "coder")
	ctx := context.Background()
	waitVaultFile(t, s, "Dashboard.md", nil)
	names := []string{"by-move.md", "by-edit.md", "by-cli.md"}
	files := map[string]string{}
	wfs := map[string]string{}
	for _, n := range names {
		drop(t, s, n, "Plan the "+strings.TrimSuffix(n, ".md")+" task.\n")
	}
	for _, n := range names {
		_, d := waitVaultFile(t, s, "In_Progress/"+n, nil)
		wfs[n] = d.Get("workflow_id")
		p, _ := waitVaultFile(t, s, "Pending_Approval/*.md", forWorkflow(wfs[n]))
		files[n] = p
	}
	moveTo(t, s, files["by-move.md"], vault.Approved)
	editDoc(t, files["by-edit.md"], func(d *vault.Doc) { d.Set("approval_status", "approved"); d.Set("decided_by", "frank") })
	data, _ := os.ReadFile(files["by-cli.md"])
	cd, _ := vault.ParseDoc(data)
	if err := s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: cd.Get("artefact_id"), Decision: blackboard.ApprovalApproved,
		By: "gina", Channel: blackboard.ChannelCLI}); err != nil {
		t.Fatal(err)
	}
	channels := map[string]string{"by-move.md": "vault_move", "by-edit.md": "frontmatter", "by-cli.md": "cli"}
	for _, n := range names {
		if w := s.WaitWorkflow(wfs[n], wait); w.Status != blackboard.WorkflowCompleted {
			t.Fatalf("%s: workflow %s (%s)", n, w.Status, w.Outcome)
		}
		_, d := waitVaultFile(t, s, "Done/"+n, nil)
		if d.Get("state") != vault.StateDone || d.Get("outcome") != "completed" || !strings.Contains(d.Body, "## Outcome") ||
			!strings.Contains(d.Body, "CodeChange") {
			t.Errorf("%s in Done/: %v\n%s", n, d.Map(), d.Body)
		}
		_, ad := waitVaultFile(t, s, "Approved/*.md", forWorkflow(wfs[n]))
		if ad.Get("approval_status") != "approved" || ad.Get("channel") != channels[n] {
			t.Errorf("%s: approval file %v, want approved via %s", n, ad.Map(), channels[n])
		}
		hr := stacktest.OfType(s.Artefacts(wfs[n]), "HumanReview")
		if len(hr) != 1 || hr[0].Metadata["channel"] != channels[n] {
			t.Errorf("%s: human reviews %+v, want one via %s", n, hr, channels[n])
		}
	}
}

// TestVaultStaleDecisionRefused: with on_reject rework, a rejection in
// the vault brings version 2; a decision on a copy of version 1's file is
// refused with a note saying which version is current.
func TestVaultStaleDecisionRefused(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, vaultConfig("  on_reject: rework\n", ""))
	s.Up("planner", "coder")
	waitVaultFile(t, s, "Dashboard.md", nil)
	drop(t, s, "stale.md", "Plan something.\n")
	_, d := waitVaultFile(t, s, "In_Progress/stale.md", nil)
	wf := d.Get("workflow_id")
	v1, _ := waitVaultFile(t, s, "Pending_Approval/*.md", forWorkflow(wf))
	old, err := os.ReadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	editDoc(t, v1, func(d *vault.Doc) {
		d.Set("approval_status", "rejected")
		d.Set("reason", "Too vague: name the steps.")
	})
	_, v2 := waitVaultFile(t, s, "Pending_Approval/*.md", func(d *vault.Doc) bool { return d.Get("workflow_id") == wf && d.Get("version") == "2" })
	copyPath := filepath.Join(s.Dir, "vault", vault.Approved, "old-copy.md")
	if err := os.WriteFile(copyPath, old, 0o644); err != nil {
		t.Fatal(err)
	}
	_, refused := waitVaultFile(t, s, "Approved/old-copy.md", func(d *vault.Doc) bool { return d.Get("approval_status") == vault.StatusRefused })
	note := refused.Get("sett_note")
	if !strings.Contains(note, "version 2") || !strings.Contains(refused.Body, "**Sett:**") {
		t.Errorf("refusal note %q, body:\n%s", note, refused.Body)
	}
	cl, err := s.BB.GetClaim(context.Background(), v2.Get("claim_id"))
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != blackboard.ClaimPendingApproval || cl.Approval.Decision != "" {
		t.Errorf("version 2's claim %s %+v: the stale decision must not touch it", cl.Status, cl.Approval)
	}
}

// TestVaultApprovalTimeout: a task's approval_timeout passes with nobody
// deciding; the approval file moves to Needs_Human_Review/.
func TestVaultApprovalTimeout(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, vaultConfig("", ""))
	s.Up("planner", "coder")
	waitVaultFile(t, s, "Dashboard.md", nil)
	drop(t, s, "slow.md", "---\napproval_timeout: 2s\n---\nPlan it.\n")
	_, d := waitVaultFile(t, s, "In_Progress/slow.md", nil)
	wf := d.Get("workflow_id")
	_, hr := waitVaultFile(t, s, "Needs_Human_Review/*.md", forWorkflow(wf))
	if hr.Get("approval_status") != "expired" || hr.Get("sett_note") == "" {
		t.Errorf("timed-out approval: %v", hr.Map())
	}
	_, f := waitVaultFile(t, s, "Failed/slow.md", nil)
	if f.Get("state") != vault.StateFailed {
		t.Errorf("task after the timeout: %v", f.Map())
	}
}

// TestVaultRefusedFiles: every kind of refused file stays as it is and is
// listed on the dashboard with its reason; ignored files are not touched
// or listed; nothing starts a workflow.
func TestVaultRefusedFiles(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, vaultConfig("", "  max_file_bytes: 2KiB\n"))
	s.Up("planner", "coder")
	waitVaultFile(t, s, "Dashboard.md", nil)
	na := filepath.Join(s.Dir, "vault", vault.NeedsAction)
	outside := filepath.Join(s.Dir, "outside.md")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(s.Dir, "vault", "inside.md")
	if err := os.WriteFile(inside, []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"bad-yaml.md":                 []byte("---\npriority: [high\n---\nDo it.\n"),
		"bad-priority.md":             []byte("---\npriority: urgent-ish\n---\nDo it.\n"),
		"too-big.md":                  []byte(strings.Repeat("x", 3000)),
		"latin1.md":                   {'c', 'a', 'f', 0xe9, '\n'},
		".hidden.md":                  []byte("hidden\n"),
		"notes.txt":                   []byte("not markdown\n"),
		"a.sync-conflict-20260101.md": []byte("conflict\n"),
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(na, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(inside, filepath.Join(na, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(na, "escape.md")); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{
		"bad-yaml.md": "invalid frontmatter", "bad-priority.md": "priority", "too-big.md": "too large",
		"latin1.md": "UTF-8", "link.md": "symbolic link", "escape.md": "escapes the vault",
	}
	s.Eventually(wait, "every refused file on the dashboard", func() bool {
		dash := readVault(t, s, "Dashboard.md")
		for n, why := range reasons {
			line := ""
			for _, l := range strings.Split(dash, "\n") {
				if strings.Contains(l, `Needs\_Action/`+n+":") {
					line = l
				}
			}
			if !strings.Contains(line, why) {
				return false
			}
		}
		return true
	})
	dash := readVault(t, s, "Dashboard.md")
	for _, n := range []string{".hidden.md", "notes.txt", "sync-conflict"} {
		if strings.Contains(dash, n) {
			t.Errorf("the dashboard lists the ignored file %s:\n%s", n, dash)
		}
	}
	for n, b := range files {
		got, err := os.ReadFile(filepath.Join(na, n))
		if err != nil || string(got) != string(b) {
			t.Errorf("%s changed or moved (%v)", n, err)
		}
	}
	for _, n := range []string{"link.md", "escape.md"} {
		if fi, err := os.Lstat(filepath.Join(na, n)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s changed or moved (%v)", n, err)
		}
	}
	if ids, err := s.BB.ListWorkflows(context.Background(), 100); err != nil || len(ids) != 0 {
		t.Errorf("workflows %v (%v), want none", ids, err)
	}
}

// TestVaultHandEditReachesTheTool: a person's own line in
// Agent_Memory.md and Company_Handbook.md is in the next tool input.
func TestVaultHandEditReachesTheTool(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, vaultConfig("", ""))
	s.Up("planner", "coder")
	ctx := context.Background()
	waitVaultFile(t, s, "Dashboard.md", nil)
	p := filepath.Join(s.Dir, "vault", vault.AgentMemoryFile)
	mem := readVault(t, s, vault.AgentMemoryFile)
	if err := os.WriteFile(p, []byte(mem+"- Always sign replies as The Sett Team.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Eventually(wait, "the edit published", func() bool {
		m, err := s.BB.GetToolMemory(ctx)
		return err == nil && strings.Contains(m.Learnings, "The Sett Team") && strings.Contains(m.Handbook, "Company Handbook")
	})
	drop(t, s, "reply.md", "Reply to the customer.\n")
	_, d := waitVaultFile(t, s, "In_Progress/reply.md", nil)
	_, pd := waitVaultFile(t, s, "Pending_Approval/*.md", forWorkflow(d.Get("workflow_id")))
	plan, err := s.BB.GetArtefact(ctx, pd.Get("artefact_id"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.Payload, "- Always sign replies as The Sett Team.") {
		t.Errorf("the plan's tool input did not carry the hand edit:\n%s", plan.Payload)
	}
}

// TestVaultBurst drops 200 task files at once and kills the orchestrator
// (kill -9) during the burst: every file starts exactly one workflow.
func TestVaultBurst(t *testing.T) {
	t.Parallel()
	const n = 200
	s := stacktest.New(t, `version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: 3s
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"], max_concurrent: 8}
vault:
  path: vault
  rescan_interval: 1s
  max_concurrent_tasks: 0
`)
	// The first orchestrator dies (as kill -9 would) right after creating
	// the first goal, before moving its file.
	cub := s.StartCub("planner")
	s.WaitReady(cub)
	orch := s.StartOrchestratorWith("SETT_FAILPOINT=vault-goal-created")
	s.WaitReady(orch)
	waitVaultFile(t, s, "Dashboard.md", nil)
	stage := filepath.Join(s.Dir, "stage")
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("task-%03d.md", i)
		if err := os.WriteFile(filepath.Join(stage, name), []byte(fmt.Sprintf("Task number %d.\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("task-%03d.md", i)
		if err := os.Rename(filepath.Join(stage, name), filepath.Join(s.Dir, "vault", vault.NeedsAction, name)); err != nil {
			t.Fatal(err)
		}
	}
	if code := orch.WaitExit(wait); code != 137 {
		t.Fatalf("the orchestrator exited %d, want the failpoint's 137", code)
	}
	if m, _ := filepath.Glob(filepath.Join(s.Dir, "vault", vault.NeedsAction, "task-*.md")); len(m) != n {
		t.Fatalf("%d files in Needs_Action/ after the crash, want all %d (the goal was created, the file not moved)", len(m), n)
	}
	orch.SetEnv()
	orch.Restart()
	// And kill -9 the new leader while it admits the burst.
	s.Eventually(wait, "part of the burst admitted", func() bool {
		m, _ := filepath.Glob(filepath.Join(s.Dir, "vault", vault.NeedsAction, "task-*.md"))
		return len(m) < n
	})
	orch.Kill()
	orch.Restart()
	defer func() {
		if !t.Failed() {
			return
		}
		for _, f := range []string{vault.NeedsAction, vault.InProgress, vault.Done, vault.Failed} {
			m, _ := filepath.Glob(filepath.Join(s.Dir, "vault", f, "*"))
			var names []string
			for _, p := range m {
				names = append(names, filepath.Base(p))
			}
			if len(names) > 30 {
				names = names[len(names)-30:]
			}
			t.Logf("%s: %d files, last: %v", f, len(m), names)
		}
		t.Logf("dashboard:\n%s", readVault(t, s, "Dashboard.md"))
	}()
	// Every file ends in Done/ or Failed/, once; and since only the
	// orchestrator is killed (the cub keeps its leases), every workflow
	// completes: a failure here once exposed bid requests the cub skipped.
	finished := func() (done, failed []string) {
		done, _ = filepath.Glob(filepath.Join(s.Dir, "vault", vault.Done, "task-*.md"))
		failed, _ = filepath.Glob(filepath.Join(s.Dir, "vault", vault.Failed, "task-*.md"))
		return done, failed
	}
	s.Eventually(3*wait, "every task finished", func() bool {
		d, f := finished()
		return len(d)+len(f) >= n
	})
	ids, err := s.BB.ListWorkflows(context.Background(), 10*n)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != n {
		t.Errorf("%d workflows for %d task files, want exactly one each", len(ids), n)
	}
	seen := map[string]string{}
	done, failed := finished()
	if len(done)+len(failed) != n {
		t.Errorf("%d files in Done/ and %d in Failed/, want %d in all", len(done), len(failed), n)
	}
	if len(failed) > 0 {
		t.Errorf("%d workflows failed (first: %s); killing the orchestrator must cost none", len(failed), filepath.Base(failed[0]))
	}
	inDone := map[string]bool{}
	for _, p := range done {
		inDone[filepath.Base(p)] = true
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("task-%03d.md", i)
		folder, want := vault.Done, vault.StateDone
		if !inDone[name] {
			folder, want = vault.Failed, vault.StateFailed
		}
		data, err := os.ReadFile(filepath.Join(s.Dir, "vault", folder, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d, err := vault.ParseDoc(data)
		if err != nil {
			t.Fatal(err)
		}
		wf := d.Get("workflow_id")
		if other, dup := seen[wf]; dup {
			t.Errorf("%s and %s share workflow %s", name, other, wf)
		}
		seen[wf] = name
		if d.Get("state") != want {
			t.Errorf("%s in %s/: state %q", name, folder, d.Get("state"))
		}
	}
	left, _ := filepath.Glob(filepath.Join(s.Dir, "vault", vault.NeedsAction, "*.md"))
	if len(left) != 0 {
		t.Errorf("left in Needs_Action/: %v", left)
	}
}

// TestVaultMaxConcurrentTasks: with max_concurrent_tasks 1, a second task
// waits in Needs_Action/ until the first one is finished.
func TestVaultMaxConcurrentTasks(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, approvalConfig("", "", "")+"\nvault:\n  path: vault\n  rescan_interval: 1s\n  max_concurrent_tasks: 1\n")
	s.Up("planner", "coder")
	waitVaultFile(t, s, "Dashboard.md", nil)
	drop(t, s, "first.md", "---\npriority: high\n---\nFirst.\n")
	_, d := waitVaultFile(t, s, "In_Progress/first.md", nil)
	drop(t, s, "second.md", "Second.\n")
	p, _ := waitVaultFile(t, s, "Pending_Approval/*.md", forWorkflow(d.Get("workflow_id")))
	s.Eventually(wait, "the dashboard counting the waiting task", func() bool {
		return strings.Contains(readVault(t, s, "Dashboard.md"), "Needs_Action: 1 waiting")
	})
	if _, err := os.Stat(filepath.Join(s.Dir, "vault", vault.NeedsAction, "second.md")); err != nil {
		t.Fatalf("the second task left Needs_Action/ while the first runs: %v", err)
	}
	if ids, _ := s.BB.ListWorkflows(context.Background(), 10); len(ids) != 1 {
		t.Fatalf("%d workflows, want only the first", len(ids))
	}
	moveTo(t, s, p, vault.Approved)
	waitVaultFile(t, s, "Done/first.md", nil)
	waitVaultFile(t, s, "In_Progress/second.md", nil)
}

// TestVaultPeopleWritingInPlace writes task files the way people do,
// with no rename into Needs_Action/: an editor's autosaves (an empty
// file, part of the text, the whole text, then the rename to its
// title), a copy in two chunks with a pause, and an edit of the task
// file while its workflow runs. Each ends in exactly one workflow with
// the full text, and no file of the person's gets shorter.
func TestVaultPeopleWritingInPlace(t *testing.T) {
	t.Parallel()
	// A settle period well above the copy's pause below, so that a busy
	// machine does not stretch the pause past it.
	s := stacktest.New(t, vaultConfig("", "  settle: 3s\n"))
	s.Up("planner", "coder")
	ctx := context.Background()
	waitVaultFile(t, s, "Dashboard.md", nil)
	na := filepath.Join(s.Dir, "vault", vault.NeedsAction)
	write := func(p, text string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	untitled := filepath.Join(na, "Untitled.md")
	full := "---\npriority: high\n---\nAdd a /health endpoint and document it.\n"
	write(untitled, "")
	write(untitled, "Add a /he")
	write(untitled, full)
	if err := os.Rename(untitled, filepath.Join(na, "Health endpoint.md")); err != nil {
		t.Fatalf("the editor's rename failed: %v", err)
	}
	_, h := waitVaultFile(t, s, "In_Progress/Health endpoint.md", nil)

	report := filepath.Join(na, "report.md")
	write(report, "---\nsubject: Report\n---\nWrite the report with three sections:\n")
	f, err := os.OpenFile(report, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The copy pauses after its first chunk until Sett has seen the
	// partial file and holds it (the Dashboard counts it as still being
	// written), then writes the rest: the pause is the writer's, observed,
	// not a guess at how long Sett takes.
	dash := filepath.Join(s.Dir, "vault", "Dashboard.md")
	s.Eventually(wait, "the Dashboard to hold the half-copied report as still being written", func() bool {
		b, err := os.ReadFile(dash)
		return err == nil && strings.Contains(string(b), "1 still being written")
	})
	if _, err := os.Stat(filepath.Join(s.Dir, "vault", "In_Progress", "report.md")); err == nil {
		t.Fatal("the half-copied report was taken as a task")
	}
	if _, err := f.WriteString("1. revenue\n2. costs\n3. outlook\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rpath, r := waitVaultFile(t, s, "In_Progress/report.md", nil)

	// The person adds a line to the running task; Sett's state updates
	// keep it, and no second workflow starts.
	data, err := os.ReadFile(rpath)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "3. outlook", "3. outlook\n4. risks (added while it ran)", 1)
	write(rpath, edited)
	for _, c := range []struct {
		doc  *vault.Doc
		text string
	}{
		{h, "Add a /health endpoint and document it."},
		{r, "3. outlook"},
	} {
		g, err := s.BB.GetArtefact(ctx, c.doc.Get("workflow_id"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(g.Payload, c.text) {
			t.Errorf("goal %q lacks %q", g.Payload, c.text)
		}
	}
	s.Eventually(wait, "the dashboard noting the edit", func() bool {
		return strings.Contains(readVault(t, s, "Dashboard.md"), "your edit of In\\_Progress/report.md is kept")
	})
	if got := readVault(t, s, filepath.Join(vault.InProgress, "report.md")); !strings.Contains(got, "4. risks (added while it ran)") {
		t.Errorf("the person's edit is gone:\n%s", got)
	}
	if ids, err := s.BB.ListWorkflows(ctx, 100); err != nil || len(ids) != 2 {
		t.Errorf("workflows %v (%v), want exactly two", ids, err)
	}
	if left, _ := os.ReadDir(na); len(left) != 0 {
		t.Errorf("left in Needs_Action/: %v", left)
	}
}

// TestVaultRetryShows: while a task's tool waits for a retry, its task
// file says so (attempt, next_retry_at, last_error) and the Dashboard
// lists it; when the retry succeeds the file ends in Done/ without a
// pending retry.
func TestVaultRetryShows(t *testing.T) {
	t.Parallel()
	worker := `["sh", "-c", "n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; if [ $n -le 1 ]; then echo disk full >&2; exit 1; fi; exec sett-writer --type Note"]`
	cfg := `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 3s}
vault: {path: vault, rescan_interval: 1s, settle: 300ms}
agents:
  worker: {command: ` + worker + `, bidding_strategy: exclusive, consumes: ["GoalDefined"], retry: {max_attempts: 3, backoff: [5s]}}
`
	s := stacktest.New(t, cfg)
	s.Up("worker")
	waitVaultFile(t, s, "Dashboard.md", nil)
	drop(t, s, "flaky.md", "Write a note.\n")
	_, d := waitVaultFile(t, s, "In_Progress/flaky.md", func(d *vault.Doc) bool { return d.Get("state") == vault.StateRetrying })
	if d.Get("attempt") != "2" || d.Get("next_retry_at") == "" || d.Get("last_error") == "" {
		t.Errorf("retrying task file: %v", d.Map())
	}
	s.Eventually(wait, "the dashboard listing the retry", func() bool {
		return strings.Contains(readVault(t, s, "Dashboard.md"), "retrying (attempt 2")
	})
	_, done := waitVaultFile(t, s, "Done/flaky.md", nil)
	if done.Get("outcome") != "completed" || done.Has("next_retry_at") || done.Get("attempt") != "2" {
		t.Errorf("finished task file: %v", done.Map())
	}
}
