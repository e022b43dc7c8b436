package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

var workflowLine = regexp.MustCompile(`(?m)^workflow  ([0-9a-f-]{36})$`)

// postedWorkflow waits until forage printed its workflow id and returns it.
func postedWorkflow(tb testing.TB, e *testEnv) string {
	tb.Helper()
	out := e.out.waitUntil(tb, "the workflow id", workflowLine.MatchString)
	return workflowLine.FindStringSubmatch(out)[1]
}

func TestForagePostsAGoal(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	out := e.mustRun(t, "forage", "--goal", "Add a /health endpoint", "--priority", "7")
	m := regexp.MustCompile(`(?m)^goal      ([0-9a-f-]{36})\nworkflow  ([0-9a-f-]{36})$`).FindStringSubmatch(out)
	if m == nil || m[1] != m[2] {
		t.Fatalf("output does not give the goal and workflow id (the same id):\n%s", out)
	}
	g, err := e.bb.GetArtefact(t.Context(), m[1])
	if err != nil {
		t.Fatal(err)
	}
	if g.Type != blackboard.GoalType || g.ProducedByRole != "user" || g.Payload != "Add a /health endpoint" || g.Metadata["priority"] != "7" {
		t.Errorf("goal = %+v", g)
	}
	w, err := e.bb.GetWorkflow(t.Context(), m[1])
	if err != nil || w.Priority != 7 || w.Status != blackboard.WorkflowRunning {
		t.Errorf("workflow = %+v, %v; want running with priority 7", w, err)
	}

	var res forageResult
	if err := json.Unmarshal([]byte(e.mustRun(t, "forage", "--goal", "second", "-o", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.GoalID == "" || res.GoalID != res.WorkflowID {
		t.Errorf("json result = %+v", res)
	}
}

func TestForageGoalFile(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	file := filepath.Join(e.app.Dir, "health.md")
	body := "---\npriority: 4\ndeadline: 2024-06-01\nfrom: alice\nsubject: Health check\nteam: platform\n---\n\n# Add /health\n\nReturn 200 when Redis answers.\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// The deadline is long past: the most urgent (+20).
	cases := []struct {
		name     string
		args     []string
		priority string
		score    int
	}{
		{"priority from the file", []string{"--goal-file", "health.md"}, "4", 24},
		{"--priority overrides the file", []string{"--goal-file", file, "--priority", "9"}, "9", 29},
		{"a label", []string{"--goal-file", file, "--priority", "high"}, "high", 30},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := e.mustRun(t, append([]string{"forage"}, tc.args...)...)
			id := workflowLine.FindStringSubmatch(out)[1]
			g, err := e.bb.GetArtefact(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"priority": tc.priority, "deadline": "2024-06-01", "from": "alice", "subject": "Health check", "team": "platform"}
			for k, v := range want {
				if g.Metadata[k] != v {
					t.Errorf("metadata[%s] = %q, want %q (all: %v)", k, g.Metadata[k], v, g.Metadata)
				}
			}
			if g.Priority != tc.score {
				t.Errorf("goal priority %d, want the score %d", g.Priority, tc.score)
			}
			if w, err := e.bb.GetWorkflow(t.Context(), id); err != nil || w.Priority != tc.score {
				t.Errorf("workflow priority %+v, %v; want the score %d", w, err, tc.score)
			}
			if g.Payload != "# Add /health\n\nReturn 200 when Redis answers." || g.Summary != "Health check" {
				t.Errorf("payload %q, summary %q", g.Payload, g.Summary)
			}
		})
	}
}

func TestForageRefusesBadInputAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	bad := filepath.Join(e.app.Dir, "bad.md")
	if err := os.WriteFile(bad, []byte("---\nfrom: alice\npriority: soon\n---\nDo it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(e.app.Dir, "empty.md")
	if err := os.WriteFile(empty, []byte("---\nfrom: alice\n---\n\n   \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no goal", nil, "no goal"},
		{"blank goal", []string{"--goal", "  \n "}, "the goal is empty"},
		{"both sources", []string{"--goal", "x", "--goal-file", bad}, "not both"},
		{"bad frontmatter", []string{"--goal-file", bad}, `bad.md:3: priority "soon" is not high, medium, low or a whole number`},
		{"body missing", []string{"--goal-file", empty}, "the goal is empty"},
		{"missing file", []string{"--goal-file", "nope.md"}, "cannot read the goal file"},
		{"bad format", []string{"--goal", "x", "-o", "yaml"}, "unknown output format"},
		{"priority too big", []string{"--goal", "x", "--priority", "9999999999"}, "whole number between"},
		{"priority unknown", []string{"--goal", "x", "--priority", "urgent"}, `--priority: priority: invalid priority "urgent"`},
		{"deadline unreadable", []string{"--goal", "x", "--deadline", "soon"}, `--deadline: priority: invalid deadline "soon"`},
		{"timeout without a wait", []string{"--goal", "x", "--timeout", "1m"}, "use it with --wait or --watch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := e.run(t, append([]string{"forage"}, tc.args...)...)
			if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("exit %d, error %v; want %d and %q", ExitCode(err), err, ExitUsage, tc.want)
			}
		})
	}
	if n, err := e.bb.CountArtefacts(t.Context()); err != nil || n != 0 {
		t.Errorf("%d artefacts written (%v), want none", n, err)
	}
}

func TestForageRefusesADirtyGitWorkspace(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test: install it (Debian: apt-get install git)")
	}
	e := newTestEnv(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", e.app.Dir}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	// Sett's own state directory does not make the tree dirty.
	if err := os.MkdirAll(filepath.Join(e.app.Dir, ".sett", "instances"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.mustRun(t, "forage", "--goal", "clean tree")
	if err := os.WriteFile(filepath.Join(e.app.Dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := e.bb.CountArtefacts(t.Context())
	_, _, err := e.run(t, "forage", "--goal", "dirty tree")
	if err == nil || !strings.Contains(err.Error(), "uncommitted change") || !strings.Contains(err.Error(), "main.go") ||
		!strings.Contains(err.Error(), "--allow-dirty") {
		t.Fatalf("dirty tree: %v; want a refusal naming main.go and --allow-dirty", err)
	}
	if after, _ := e.bb.CountArtefacts(t.Context()); after != before {
		t.Errorf("the refused goal was written (%d → %d artefacts)", before, after)
	}
	e.mustRun(t, "forage", "--goal", "dirty tree", "--allow-dirty")
}

func TestForageWaitExitCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status blackboard.WorkflowStatus
		reason string
		code   int
	}{
		{blackboard.WorkflowCompleted, "all work complete", ExitOK},
		{blackboard.WorkflowFailed, "Plan was still rejected after 3 review iterations", ExitFailure},
		{blackboard.WorkflowCancelled, "cancelled by alice", ExitPending},
	}
	for _, tc := range cases {
		t.Run(string(tc.status), func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			done := make(chan error, 1)
			go func() {
				_, _, err := e.run(t, "forage", "--goal", "Add a /health endpoint", "--wait")
				done <- err
			}()
			wf := postedWorkflow(t, e)
			ctx := t.Context()
			// Work on the goal: a claim granted to the planner, which
			// delivers a plan. The progress lines follow the state.
			cl := &blackboard.Claim{ID: blackboard.NewID(), ArtefactID: wf, WorkflowID: wf, Status: blackboard.ClaimPendingConsensus,
				ExpectedBidders: []string{"planner"}}
			if _, err := e.bb.CreateClaim(ctx, blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.bb.TransitionClaim(ctx, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: wf,
				From: blackboard.ClaimPendingConsensus, Rev: -1, To: blackboard.ClaimPendingExclusive,
				Set: blackboard.ClaimPatch{GrantedExclusiveAgent: "planner"},
				Events: []blackboard.Event{{Type: blackboard.EventClaimGranted, WorkflowID: wf, ClaimID: cl.ID,
					Fields: map[string]string{"phase": "exclusive", "agents": "planner"}}}}); err != nil {
				t.Fatal(err)
			}
			e.out.waitUntil(t, "the progress line of the grant", func(s string) bool {
				return strings.Contains(s, "phase: exclusive · working: planner · iteration 0 · 1 artefact(s)")
			})
			planID := blackboard.NewID()
			plan := &blackboard.Artefact{ID: planID, LogicalID: planID, Version: 1, StructuralType: blackboard.StructuralStandard,
				Type: "Plan", Payload: "1. add the handler", SourceArtefacts: []string{wf}, ProducedByRole: "planner",
				WorkflowID: wf, ClaimID: cl.ID, Summary: "the plan", Depth: 1}
			if err := e.bb.CreateArtefact(ctx, plan, blackboard.WriteAuth{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.bb.EndWorkflow(ctx, wf, tc.status, tc.reason, 1); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(waitFor):
				t.Fatal("forage --wait did not return after the workflow ended")
			}
			if code := ExitCode(err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, tc.code, e.out.String())
			}
			out := e.out.String()
			for _, want := range []string{
				"Workflow " + blackboard.ShortID(wf) + " " + string(tc.status) + ": " + tc.reason,
				"Final artefacts:",
				"Plan  " + blackboard.ShortID(planID) + "  Standard  the plan",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "GoalDefined  "+blackboard.ShortID(wf)) {
				t.Errorf("the goal is cited by the plan, so it is not a final artefact:\n%s", out)
			}
		})
	}
}

func TestForageWaitTimeoutExitsPending(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	out, _, err := e.run(t, "forage", "--goal", "nobody works on this", "--wait", "--timeout", "300ms")
	if ExitCode(err) != ExitPending {
		t.Fatalf("exit %d (%v), want %d", ExitCode(err), err, ExitPending)
	}
	if !strings.Contains(out, "still running after 300ms") || !strings.Contains(out, "sett watch --workflow") {
		t.Errorf("output does not explain the timeout:\n%s", out)
	}
	// Interrupting the wait (Ctrl-C) is not a failure of the workflow.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, err := e.runContext(ctx, "forage", "--goal", "interrupted", "--wait")
		done <- err
	}()
	e.out.waitUntil(t, "the second goal", func(s string) bool { return len(workflowLine.FindAllString(s, -1)) == 2 })
	cancel()
	select {
	case err := <-done:
		if ExitCode(err) != ExitPending {
			t.Errorf("interrupted wait: exit %d (%v), want %d", ExitCode(err), err, ExitPending)
		}
	case <-time.After(waitFor):
		t.Fatal("forage --wait ignored the cancellation")
	}
}

func TestForageWatchStreamsEventsAsJSON(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	done := make(chan error, 1)
	go func() {
		_, _, err := e.run(t, "forage", "--goal", "stream me", "--watch", "-o", "json")
		done <- err
	}()
	out := e.out.waitUntil(t, "the workflow_started event", func(s string) bool { return strings.Contains(s, `"event":"workflow_started"`) })
	evs := parseEventLines(t, out)
	wf := evs[0]["workflow_id"]
	if _, err := e.bb.EndWorkflow(t.Context(), wf, blackboard.WorkflowFailed, "a Failure ended it", 1); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(waitFor):
		t.Fatal("forage --watch did not return")
	}
	if ExitCode(err) != ExitFailure {
		t.Errorf("exit %d (%v), want %d", ExitCode(err), err, ExitFailure)
	}
	lines := strings.Split(strings.TrimSpace(e.out.String()), "\n")
	var res forageResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatal(err)
	}
	if res.WorkflowID != wf || res.Status != "failed" || res.Reason != "a Failure ended it" ||
		len(res.FinalArtefacts) != 1 || res.FinalArtefacts[0].ID != wf {
		t.Errorf("result = %+v", res)
	}
	got := parseEventLines(t, strings.Join(lines[:len(lines)-1], "\n"))
	want := streamIDs(t, e.bb, func(ev blackboard.Event) bool { return ev.WorkflowID == wf })
	if strings.Join(eventIDs(got), ",") != strings.Join(want, ",") {
		t.Errorf("streamed %v, want the workflow's events %v", eventIDs(got), want)
	}
}

func TestForageWaitRedrawsOneLineOnATerminal(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.app.IsTTY = true
	e.env["NO_COLOR"] = "1"
	done := make(chan error, 1)
	go func() {
		_, _, err := e.run(t, "forage", "--goal", "tty", "--wait")
		done <- err
	}()
	wf := postedWorkflow(t, e)
	e.out.waitUntil(t, "the progress line", func(s string) bool { return strings.Contains(s, "\r\x1b[K⟳ ") })
	if _, err := e.bb.EndWorkflow(t.Context(), wf, blackboard.WorkflowCompleted, "ok", 1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := e.out.String()
	// The progress line is cleared before the outcome, which starts on a
	// clean line.
	if !strings.Contains(out, "\r\x1b[KWorkflow "+blackboard.ShortID(wf)+" completed: ok") {
		t.Errorf("outcome not printed over the cleared progress line:\n%q", out)
	}
}

// TestForageScoresWithTheWorkspaceWeights posts the scheduling rules' task A through
// the flags: the score uses sett.yml's weights and important senders, is
// the workflow's priority, and the raw fields stay in the metadata.
func TestForageScoresWithTheWorkspaceWeights(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	cfg := "version: \"1.0\"\norchestrator:\n  priority:\n    weights: {high: 11}\n    important_senders: [ceo@company.com]\nagents:\n  w: {command: [\"sett-writer\"]}\n"
	if err := os.WriteFile(filepath.Join(e.app.Dir, "sett.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var res forageResult
	out := e.mustRun(t, "forage", "--goal", "Fix the login bug", "--priority", "high", "--deadline", deadline,
		"--from", "CEO <ceo@company.com>", "-o", "json")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Score != 41 || res.PriorityInput != "high" || res.Deadline != deadline || res.From != "CEO <ceo@company.com>" {
		t.Errorf("result = %+v, want score 41 (11 + 20 + 10)", res)
	}
	g, err := e.bb.GetArtefact(t.Context(), res.GoalID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Metadata["score"]; ok || g.Priority != 41 || g.Metadata["priority"] != "high" || g.Metadata["deadline"] != deadline {
		t.Errorf("priority %d, metadata = %v; want the score 41 as the priority, the person's words in the metadata", g.Priority, g.Metadata)
	}
	if w, err := e.bb.GetWorkflow(t.Context(), res.GoalID); err != nil || w.Priority != 41 {
		t.Errorf("workflow = %+v, %v; want priority 41", w, err)
	}
	text := e.mustRun(t, "forage", "--goal", "Newsletter", "--priority", "low", "--from", "news@example.com")
	if !strings.Contains(text, "score     0\n") {
		t.Errorf("text output lacks the score:\n%s", text)
	}
	text = e.mustRun(t, "forage", "--goal", "Contract", "--priority", "medium", "--from", "ceo@company.com")
	if !strings.Contains(text, "score     15 (priority 5 + sender 10)\n") {
		t.Errorf("text output lacks the score's parts:\n%s", text)
	}
}
