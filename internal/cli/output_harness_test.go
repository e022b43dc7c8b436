package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// waitFor is how long a test waits for something it observes. It is a
// deadline, never a duration anything is asserted against.
const waitFor = 20 * time.Second

// syncBuffer is an io.Writer safe for a command writing in one goroutine
// while the test reads in another; every write wakes waiters.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{})} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	close(b.changed)
	b.changed = make(chan struct{})
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitUntil blocks until cond holds for the buffer's content, waking on
// each write, and fails the test at the deadline.
func (b *syncBuffer) waitUntil(tb testing.TB, what string, cond func(string) bool) string {
	tb.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		s, ch := b.buf.String(), b.changed
		b.mu.Unlock()
		if cond(s) {
			return s
		}
		select {
		case <-ch:
		case <-deadline.C:
			tb.Fatalf("timed out waiting for %s; output so far:\n%s", what, s)
		}
	}
}

// testEnv is one test's instance and the App the commands run with.
type testEnv struct {
	bb  *blackboard.Client
	app *App
	out *syncBuffer
	err *syncBuffer
	env map[string]string
}

// newTestEnv returns an App wired to a fresh instance on the shared test
// Redis through SETT_REDIS_URL and SETT_INSTANCE, with output in buffers.
func newTestEnv(tb testing.TB) *testEnv {
	tb.Helper()
	bb := redistest.Client(tb)
	e := &testEnv{bb: bb, out: newSyncBuffer(), err: newSyncBuffer(), env: map[string]string{
		"SETT_REDIS_URL": redistest.Shared(tb).URL(),
		"SETT_INSTANCE":  bb.Instance(),
	}}
	e.app = &App{
		In: strings.NewReader(""), Out: e.out, Err: e.err,
		LookupEnv: func(k string) (string, bool) { v, ok := e.env[k]; return v, ok },
		Dir:       tb.TempDir(),
		Now:       time.Now,
	}
	return e
}

// run executes `sett args...` and returns stdout, stderr and the error;
// output of earlier runs is not included.
func (e *testEnv) run(tb testing.TB, args ...string) (string, string, error) {
	tb.Helper()
	return e.runContext(tb.Context(), args...)
}

func (e *testEnv) runContext(ctx context.Context, args ...string) (string, string, error) {
	outBefore, errBefore := len(e.out.String()), len(e.err.String())
	root := NewRoot(e.app)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return e.out.String()[outBefore:], e.err.String()[errBefore:], err
}

// mustRun is run that fails the test on error.
func (e *testEnv) mustRun(tb testing.TB, args ...string) string {
	tb.Helper()
	out, errOut, err := e.run(tb, args...)
	if err != nil {
		tb.Fatalf("sett %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// seeded is the workflow seedWorkflow writes.
type seeded struct {
	goal, planV1, reject, planV2, approve, failure     *blackboard.Artefact
	goalClaim, planV1Claim, feedbackClaim, planV2Claim string
	terminationReason                                  string
}

// all lists the seeded artefacts in creation order.
func (s *seeded) all() []*blackboard.Artefact {
	return []*blackboard.Artefact{s.goal, s.planV1, s.reject, s.planV2, s.approve, s.failure}
}

// seedWorkflow writes, through the blackboard API, a workflow that went
// through a rework: goal → plan v1 → review (reject) → claim terminated →
// feedback claim → plan v2 → review (approve) → a tool Failure.
func seedWorkflow(tb testing.TB, bb *blackboard.Client) *seeded {
	tb.Helper()
	ctx := tb.Context()
	s := &seeded{}
	// Agents' results are written under their grant token (as a cub
	// does), which records them as the claim's outputs.
	create := func(a *blackboard.Artefact) *blackboard.Artefact {
		tb.Helper()
		auth := blackboard.WriteAuth{}
		if a.ClaimID != "" {
			auth.GrantToken = "1"
		}
		if err := bb.CreateArtefact(ctx, a, auth); err != nil {
			tb.Fatalf("create %s %s: %v", a.Type, a.ID, err)
		}
		return a
	}
	claim := func(a *blackboard.Artefact, cl *blackboard.Claim, nc blackboard.NewClaim, granted ...string) string {
		tb.Helper()
		if cl == nil {
			cl = &blackboard.Claim{ID: blackboard.NewID(), ArtefactID: a.ID, WorkflowID: a.WorkflowID,
				Status: blackboard.ClaimPendingConsensus, ExpectedBidders: []string{"planner", "reviewer"}}
			nc.ByArtefact = true
		}
		if len(granted) > 0 {
			nc.Grants = map[string]string{}
			for _, agent := range granted {
				nc.Grants[agent] = "1"
			}
		}
		nc.Claim, nc.Epoch = cl, 1 // no leader elected: any epoch passes
		created, err := bb.CreateClaim(ctx, nc)
		if err != nil {
			tb.Fatalf("create claim on %s: %v", a.ID, err)
		}
		return created.ID
	}
	finish := func(claimID string, from, to blackboard.ClaimStatus, set blackboard.ClaimPatch) {
		tb.Helper()
		if _, err := bb.TransitionClaim(ctx, blackboard.Transition{Epoch: 1,
			ClaimID: claimID, WorkflowID: s.goal.ID, From: from, Rev: -1, To: to, Set: set,
		}); err != nil {
			tb.Fatalf("transition claim %s %s → %s: %v", claimID, from, to, err)
		}
	}
	artefact := func(typ string, st blackboard.StructuralType, by, claimID, payload, summary string, depth int, sources ...string) *blackboard.Artefact {
		id := blackboard.NewID()
		return &blackboard.Artefact{
			ID: id, LogicalID: id, Version: 1, StructuralType: st, Type: typ, Payload: payload,
			SourceArtefacts: sources, ProducedByRole: by, ProducedByAgent: by, WorkflowID: s.goal.ID,
			ClaimID: claimID, Summary: summary, Depth: depth,
		}
	}

	s.goal = create(blackboard.NewGoal("Add a /health endpoint\n\nIt must return 200.", 3, "user", map[string]string{"from": "alice"}))
	s.goalClaim = claim(s.goal, nil, blackboard.NewClaim{}, "planner")
	s.planV1 = create(artefact("Plan", blackboard.StructuralStandard, "planner", s.goalClaim,
		"1. add the handler", "first plan", 1, s.goal.ID))
	finish(s.goalClaim, blackboard.ClaimPendingConsensus, blackboard.ClaimComplete, blackboard.ClaimPatch{
		GrantedExclusiveAgent: "planner", CompletionReason: "All phases complete."})
	s.planV1Claim = claim(s.planV1, nil, blackboard.NewClaim{}, "reviewer")
	s.reject = create(artefact("Review", blackboard.StructuralReview, "reviewer", s.planV1Claim,
		`{"verdict":"reject","severity":"Major","findings":["no tests"]}`, "needs tests", 2, s.planV1.ID))
	s.terminationReason = fmt.Sprintf("Terminated due to negative review feedback. See artefacts: [%s]", s.reject.ID)
	s.feedbackClaim = claim(s.planV1, &blackboard.Claim{
		ID: blackboard.NewID(), ArtefactID: s.planV1.ID, WorkflowID: s.goal.ID,
		Status: blackboard.ClaimPendingAssignment, GrantedExclusiveAgent: "planner",
		AdditionalContextIDs: []string{s.reject.ID}, ParentClaimID: s.planV1Claim, Iteration: 1, Attempts: 1,
	}, blackboard.NewClaim{Epoch: 1, AddsItem: true, Grants: map[string]string{"planner": "1"}})
	finish(s.planV1Claim, blackboard.ClaimPendingConsensus, blackboard.ClaimTerminated, blackboard.ClaimPatch{
		GrantedReviewAgents: []string{"reviewer"}, FeedbackClaimID: s.feedbackClaim, TerminationReason: s.terminationReason})

	v2 := artefact("Plan", blackboard.StructuralStandard, "planner", s.feedbackClaim,
		"1. add the handler\n2. add a test", "plan with tests", 1, s.planV1.ID, s.reject.ID)
	v2.LogicalID, v2.Version = s.planV1.ID, 2
	s.planV2 = create(v2)
	finish(s.feedbackClaim, blackboard.ClaimPendingAssignment, blackboard.ClaimComplete, blackboard.ClaimPatch{
		CompletionReason: fmt.Sprintf("Rework delivered as version 2: [%s]", s.planV2.ID)})
	s.planV2Claim = claim(s.planV2, nil, blackboard.NewClaim{}, "reviewer", "coder")
	s.approve = create(artefact("Review", blackboard.StructuralReview, "reviewer", s.planV2Claim, `{}`, "looks good", 2, s.planV2.ID))
	s.failure = create(artefact("ToolExecutionFailure", blackboard.StructuralFailure, "coder", s.planV2Claim,
		"exit status 3\nstderr: boom", "coder exited with status 3", 2, s.planV2.ID))
	finish(s.planV2Claim, blackboard.ClaimPendingConsensus, blackboard.ClaimComplete, blackboard.ClaimPatch{
		GrantedReviewAgents: []string{"reviewer"}, GrantedExclusiveAgent: "coder", CompletionReason: "All phases complete."})
	return s
}
