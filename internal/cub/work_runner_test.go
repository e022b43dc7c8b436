package cub

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/tool"
	"github.com/settdev/sett/pkg/blackboard"
)

// grantFixture is a granted claim on target for agent "me".
type grantFixture struct {
	w      *writer
	runner *WorkRunner
	target *blackboard.Artefact
	msg    blackboard.InboxMessage
	input  tool.Input // what the fake tool received
}

func newGrant(t *testing.T, kind blackboard.GrantKind, target *blackboard.Artefact, w *writer, extra []string, answer func(tool.Input) tool.Result) *grantFixture {
	t.Helper()
	status := map[blackboard.GrantKind]blackboard.ClaimStatus{
		blackboard.GrantReview: blackboard.ClaimPendingReview, blackboard.GrantClaim: blackboard.ClaimPendingParallel,
		blackboard.GrantExclusive: blackboard.ClaimPendingExclusive, blackboard.GrantFeedback: blackboard.ClaimPendingAssignment,
	}[kind]
	claimID := blackboard.NewID()
	cl := &blackboard.Claim{ID: claimID, ArtefactID: target.ID, WorkflowID: w.wf, Status: status,
		GrantedExclusiveAgent: "me", AdditionalContextIDs: extra, Iteration: 1}
	if kind == blackboard.GrantFeedback {
		cl.ParentClaimID = blackboard.NewID()
	}
	if _, _, err := w.bb.CreateClaim(context.Background(), blackboard.NewClaim{Epoch: 1, Claim: cl, Grants: map[string]string{"me": "1"}}); err != nil {
		t.Fatal(err)
	}
	set := Settings{Agent: "me", Role: "maker", Command: []string{"fake-tool"}, Workspace: t.TempDir()}
	set.applyDefaults()
	f := &grantFixture{w: w, target: target, msg: blackboard.InboxMessage{Agent: "me", Kind: blackboard.MessageGrant,
		ClaimID: claimID, ArtefactID: target.ID, WorkflowID: w.wf, Grant: kind, Token: "1"}}
	f.runner = NewWorkRunner(w.bb, set, NewContextBuilder(w.bb, 10), NewMetrics(nil), zerolog.Nop())
	f.runner.RunFunc = func(_ context.Context, s tool.Spec) tool.Result {
		if err := json.Unmarshal(s.Stdin, &f.input); err != nil {
			t.Errorf("tool input is not JSON: %v", err)
		}
		return answer(f.input)
	}
	return f
}

// run executes the grant and returns the one output it stored.
func (f *grantFixture) run(t *testing.T) *blackboard.Artefact {
	t.Helper()
	ctx := context.Background()
	view, err := f.w.bb.TakeGrant(ctx, f.msg, "cub-1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	outcome, err := f.runner.Run(ctx, blackboard.InboxEntry{InboxMessage: f.msg}, view, time.Now(), nil)
	if err != nil || outcome != Stored {
		t.Fatalf("Run = %v, %v; want Stored", outcome, err)
	}
	st, err := f.w.bb.GetClaimState(ctx, f.msg.ClaimID, f.w.wf, []string{"me"})
	if err != nil {
		t.Fatal(err)
	}
	out, ok := st.Outputs["me"]
	if !ok {
		t.Fatal("no output stored for the grant")
	}
	if st.LiveLeases["me"] {
		t.Error("the work lease outlived the stored result")
	}
	a, err := f.w.bb.GetArtefact(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func answer(doc string) func(tool.Input) tool.Result {
	return func(tool.Input) tool.Result { return tool.Result{Stdout: []byte(doc)} }
}

func TestWorkRunnerResults(t *testing.T) {
	t.Parallel()
	t.Run("exclusive grant writes a new thread", func(t *testing.T) {
		t.Parallel()
		w := newWriter(t)
		target := w.add("Plan")
		f := newGrant(t, blackboard.GrantExclusive, target, w, nil, answer(`{"artefact_type":"Code","artefact_payload":"x","summary":"did it"}`))
		a := f.run(t)
		if a.Type != "Code" || a.Version != 1 || a.LogicalID != a.ID || a.StructuralType != blackboard.StructuralStandard ||
			a.ProducedByRole != "maker" || a.ProducedByAgent != "me" || a.Summary != "did it" ||
			len(a.SourceArtefacts) != 1 || a.SourceArtefacts[0] != target.ID || a.Depth != target.Depth+1 {
			t.Fatalf("artefact %+v", a)
		}
		if f.input.ClaimType != tool.ClaimTypeExclusive || f.input.TargetArtefact.ID != target.ID || f.input.Agent != "me" ||
			f.input.Workflow.ID != w.wf || f.input.Workflow.Goal != "goal" {
			t.Fatalf("tool input %+v", f.input)
		}
	})
	t.Run("review grant is structural Review", func(t *testing.T) {
		t.Parallel()
		w := newWriter(t)
		f := newGrant(t, blackboard.GrantReview, w.add("Plan"), w, nil, answer(`{"artefact_type":"Review","artefact_payload":{}}`))
		if a := f.run(t); a.StructuralType != blackboard.StructuralReview || a.Payload != "{}" {
			t.Fatalf("review %s %q, want structural Review with payload {}", a.StructuralType, a.Payload)
		}
	})
	t.Run("feedback grant writes the next version", func(t *testing.T) {
		t.Parallel()
		w := newWriter(t)
		target := w.add("Plan")
		r1, r2, r3 := w.add("Review", target.ID), w.add("Review", target.ID), w.add("Review", target.ID)
		f := newGrant(t, blackboard.GrantFeedback, target, w, []string{r1.ID, r2.ID, r3.ID},
			answer(`{"artefact_payload":"better","summary":"rev 2"}`))
		a := f.run(t)
		if a.LogicalID != target.LogicalID || a.Version != 2 || a.Type != "Plan" || a.Depth != target.Depth ||
			strings.Join(a.SourceArtefacts, ",") != strings.Join([]string{target.ID, r1.ID, r2.ID, r3.ID}, ",") {
			t.Fatalf("rework %+v, want v2 of the thread sourced from target and the reviews", a)
		}
		if f.input.ClaimType != tool.ClaimTypeFeedback || len(f.input.Feedback) != 3 || len(f.input.ContextChain) != 3 {
			t.Fatalf("feedback input: type %s, %d reviews, chain %d", f.input.ClaimType, len(f.input.Feedback), len(f.input.ContextChain))
		}
	})
	t.Run("unusable output becomes a precise Failure", func(t *testing.T) {
		t.Parallel()
		w := newWriter(t)
		f := newGrant(t, blackboard.GrantExclusive, w.add("Plan"), w, nil, answer(`{"artefact_payload":"no type"}`))
		a := f.run(t)
		if a.StructuralType != blackboard.StructuralFailure || a.Type != FailureToolExecution ||
			a.Metadata["failure_kind"] != "invalid_output" || !strings.Contains(a.Payload, "artefact_type") {
			t.Fatalf("failure %+v", a)
		}
	})
	t.Run("a failed run is reported with its kind", func(t *testing.T) {
		t.Parallel()
		w := newWriter(t)
		f := newGrant(t, blackboard.GrantExclusive, w.add("Plan"), w, nil, func(tool.Input) tool.Result {
			return tool.Result{ExitCode: 3, Failure: tool.FailureExitNonzero, Detail: "exit status 3", StderrTail: []byte("boom"), StderrBytes: 4}
		})
		a := f.run(t)
		if a.Metadata["failure_kind"] != "exit_nonzero" || !strings.Contains(a.Payload, "exit status 3") || !strings.Contains(a.Payload, "boom") {
			t.Fatalf("failure %+v", a)
		}
	})
}

func TestCodeCommitMustExist(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required for this test: install it (apt-get install git)")
	}
	dir := t.TempDir()
	gitRun := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitRun("init", "-q")
	if err := os.WriteFile(dir+"/f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun("add", "f")
	gitRun("commit", "-qm", "c")
	head := gitRun("rev-parse", "HEAD")
	for _, tc := range []struct {
		name, payload string
		ok            bool
	}{
		{"existing commit", head, true},
		{"short hash", head[:10], true},
		{"unknown commit", strings.Repeat("a", 40), false},
		{"not a hash", "fix the bug", false},
	} {
		err := CheckCommit(context.Background(), dir, tc.payload)
		if (err == nil) != tc.ok {
			t.Errorf("%s: CheckCommit = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	if err := CheckCommit(context.Background(), t.TempDir(), "anything"); err != nil {
		t.Errorf("outside a repository: %v, want no check", err)
	}
}

func TestToolEnvHasNoRedisCredentials(t *testing.T) {
	t.Parallel()
	w := newWriter(t)
	set := Settings{Agent: "me", Command: []string{"x"}, Workspace: "/ws", Environment: map[string]string{"MODEL": "m1"}}
	set.applyDefaults()
	r := NewWorkRunner(w.bb, set, nil, NewMetrics(nil), zerolog.Nop())
	r.BaseEnv = []string{"PATH=/bin", "HOME=/h", "SETT_REDIS_URL=redis://:secret@h:6379", "REDIS_PASSWORD=secret", "OTHER=x"}
	env := strings.Join(r.ToolEnv("c1"), "\n")
	for _, bad := range []string{"secret", "REDIS", "OTHER"} {
		if strings.Contains(env, bad) {
			t.Errorf("tool env contains %q:\n%s", bad, env)
		}
	}
	for _, want := range []string{"PATH=/bin", "SETT_AGENT=me", "SETT_CLAIM_ID=c1", "SETT_WORKSPACE=/ws", "MODEL=m1", "SETT_INSTANCE="} {
		if !strings.Contains(env, want) {
			t.Errorf("tool env lacks %q:\n%s", want, env)
		}
	}
}
