package cub

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/tool"
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
	if _, err := w.bb.CreateClaim(context.Background(), blackboard.NewClaim{Epoch: 1, Claim: cl, Grants: map[string]string{"me": "1"}}); err != nil {
		t.Fatal(err)
	}
	set := Config{Agent: "me", Role: "maker", Command: []string{"fake-tool"}, Workspace: t.TempDir()}
	set.applyDefaults()
	f := &grantFixture{w: w, target: target, msg: blackboard.InboxMessage{Agent: "me", Kind: blackboard.MessageGrant,
		ClaimID: claimID, ArtefactID: target.ID, WorkflowID: w.wf, Grant: kind, Token: "1"}}
	f.runner = NewWorkRunner(WorkRunnerParams{Client: w.bb, Config: set.workRunner(), Builder: NewContextBuilder(w.bb, 10),
		Metrics: NewMetrics(nil), Log: zerolog.Nop()})
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
		// The reviews come once, in feedback, not again in the chain.
		if f.input.ClaimType != tool.ClaimTypeFeedback || len(f.input.Feedback) != 3 || len(f.input.ContextChain) != 0 {
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
	set := Config{Agent: "me", Command: []string{"x"}, Workspace: "/ws", Environment: map[string]string{"MODEL": "m1"}}
	set.applyDefaults()
	r := NewWorkRunner(WorkRunnerParams{Client: w.bb, Config: set.workRunner(), Metrics: NewMetrics(nil), Log: zerolog.Nop()})
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

// TestInvalidMemoryNeverBlocks: a memory that breaks the contract is
// repaired or dropped, the result is stored as the tool's work (never a
// Failure) and a memory_warning event says what happened (memory never blocks)
// NFR-4).
func TestInvalidMemoryNeverBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		memory     string
		wantAction string
		check      func(t *testing.T, m *memory.AgentMemory)
	}{
		{name: "six key findings are cut to five", wantAction: "repaired",
			memory: `{"status":"NEEDS_REVISION","highest_severity":"Major","key_findings":["f1","f2","f3","f4","f5","f6"]}`,
			check: func(t *testing.T, m *memory.AgentMemory) {
				if m == nil || !m.Truncated || len(m.KeyFindings) != memory.MaxKeyFindings || m.KeyFindings[4] != "f5" || m.HighestSeverity != "Major" {
					t.Fatalf("stored memory %+v, want the first five findings, marked truncated", m)
				}
			}},
		{name: "an over-long line is cut", wantAction: "repaired",
			memory: `{"status":"DONE","summary":"` + strings.Repeat("s", memory.MaxTextLen+1) + `"}`,
			check: func(t *testing.T, m *memory.AgentMemory) {
				if m == nil || !m.Truncated || len([]rune(m.Summary)) != memory.MaxTextLen {
					t.Fatalf("stored memory %+v, want the summary cut to %d", m, memory.MaxTextLen)
				}
			}},
		{name: "a memory without a status is dropped", wantAction: "dropped",
			memory: `{"key_findings":["f1"]}`,
			check: func(t *testing.T, m *memory.AgentMemory) {
				if m != nil {
					t.Fatalf("stored memory %+v, want none", m)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWriter(t)
			f := newGrant(t, blackboard.GrantReview, w.add("Plan"), w, nil,
				answer(`{"artefact_type":"Review","artefact_payload":{"verdict":"reject","severity":"Major"},"memory":`+tt.memory+`}`))
			a := f.run(t)
			if a.StructuralType != blackboard.StructuralReview || a.Type != "Review" {
				t.Fatalf("stored %s %s (%s), want the Review itself", a.StructuralType, a.Type, a.Summary)
			}
			var m *memory.AgentMemory
			if a.Memory != "" {
				m = &memory.AgentMemory{}
				if err := json.Unmarshal([]byte(a.Memory), m); err != nil {
					t.Fatal(err)
				}
			}
			tt.check(t, m)
			if a.Metadata[metaMemoryAction] != tt.wantAction || a.Metadata[metaMemoryProblem] == "" {
				t.Errorf("metadata %v, want memory_action %s and the problem", a.Metadata, tt.wantAction)
			}
			events, err := w.bb.RangeEvents(context.Background(), "-", "+", 0)
			if err != nil {
				t.Fatal(err)
			}
			var warn *blackboard.Event
			for i, e := range events {
				if e.Type == blackboard.EventMemoryWarning {
					warn = &events[i]
				}
			}
			if warn == nil {
				t.Fatal("no memory_warning event")
			}
			if warn.ArtefactID != a.ID || warn.Agent != "me" || warn.WorkflowID != w.wf || warn.Field("action") != tt.wantAction ||
				!strings.Contains(warn.Field("problem"), "invalid agent memory") {
				t.Errorf("memory_warning %+v", warn)
			}
		})
	}
}

// TestReworkKeepsItsContext: at every iteration a rework's input holds
// the goal, the latest version, what the thread was first built from and
// the latest round's reviews, each review once (issue 28: the v3 rework's
// chain used to be [Review, Review], without the brief).
func TestReworkKeepsItsContext(t *testing.T) {
	t.Parallel()
	w := newWriter(t)
	brief := w.add("Brief")
	v1 := w.add("Plan", brief.ID)
	r1a, r1b := w.add("Review", v1.ID), w.add("Review", v1.ID)
	v2 := w.next(v1, v1.ID, r1a.ID, r1b.ID)
	r2 := w.add("Review", v2.ID)
	v3 := w.next(v2, v2.ID, r2.ID)
	r3a, r3b := w.add("Review", v3.ID), w.add("Review", v3.ID)
	v4 := w.next(v3, v3.ID, r3a.ID, r3b.ID)
	r4 := w.add("Review", v4.ID)
	for _, tt := range []struct {
		name    string
		target  *blackboard.Artefact
		reviews []*blackboard.Artefact
	}{
		{name: "v3", target: v3, reviews: []*blackboard.Artefact{r3a, r3b}},
		{name: "v4", target: v4, reviews: []*blackboard.Artefact{r4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newGrant(t, blackboard.GrantFeedback, tt.target, w, ids(tt.reviews), answer(`{"artefact_payload":"better","summary":"next"}`))
			f.run(t)
			in := f.input
			if in.Workflow.Goal != "goal" || in.TargetArtefact.ID != tt.target.ID || in.TargetArtefact.Payload != tt.target.Payload {
				t.Fatalf("goal %q, target %s; want the goal and the latest version %s", in.Workflow.Goal, in.TargetArtefact.ID, tt.target.ID)
			}
			seen := map[string]int{}
			for _, a := range append(append([]tool.Artefact(nil), in.ContextChain...), in.Feedback...) {
				seen[a.ID]++
			}
			for _, r := range tt.reviews {
				if seen[r.ID] != 1 {
					t.Errorf("review %s appears %d times in chain and feedback, want once", r.ID, seen[r.ID])
				}
			}
			if len(in.Feedback) != len(tt.reviews) {
				t.Errorf("feedback holds %d reviews, want %d", len(in.Feedback), len(tt.reviews))
			}
			if seen[brief.ID] != 1 {
				t.Errorf("the brief the plan was built from is missing (chain %v)", chainIDs(in.ContextChain))
			}
			for _, old := range []*blackboard.Artefact{r1a, r1b, r2, r3a, r3b} {
				if seen[old.ID] > 0 && !slices.Contains(tt.reviews, old) {
					t.Errorf("an earlier round's review %s is in the input (chain %v)", old.ID, chainIDs(in.ContextChain))
				}
			}
			if len(in.ContextChain) != 1 {
				t.Errorf("chain %v, want only the brief", chainIDs(in.ContextChain))
			}
		})
	}
}

func chainIDs(arts []tool.Artefact) []string {
	out := make([]string, len(arts))
	for i, a := range arts {
		out[i] = a.Type + ":" + a.ID
	}
	return out
}

// TestToolSeesOnlyItsPassThroughVariables runs a real tool process for a
// grant, from a cub whose environment holds two API keys and the Redis
// password, with environment_from_host naming one key (and one variable
// the cub does not have): the tool's environment is the contract's, PATH
// and HOME, and that one key — not the other key, not the password.
func TestToolSeesOnlyItsPassThroughVariables(t *testing.T) {
	t.Parallel()
	w := newWriter(t)
	target := w.add("Plan")
	f := newGrant(t, blackboard.GrantExclusive, target, w, nil, nil)
	ws := t.TempDir()
	set := Config{Agent: "me", Role: "maker", Workspace: ws, ToolTimeout: time.Minute,
		EnvironmentFromHost: []string{"OPENAI_API_KEY", "NOT_IN_THE_CUB"},
		Command:             []string{"/bin/sh", "-c", `env > "$SETT_WORKSPACE/env.txt"; echo '{"artefact_type":"Code","artefact_payload":"x"}'`}}
	set.applyDefaults()
	f.runner = NewWorkRunner(WorkRunnerParams{Client: w.bb, Config: set.workRunner(), Builder: NewContextBuilder(w.bb, 10),
		Metrics: NewMetrics(nil), Log: zerolog.Nop()})
	f.runner.BaseEnv = []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/cub", "OPENAI_API_KEY=sk-from-a-secret",
		"ANTHROPIC_API_KEY=sk-not-listed", "SETT_REDIS_PASSWORD=redis-secret", "KUBERNETES_SERVICE_HOST=10.0.0.1"}
	if a := f.run(t); a.Type != "Code" {
		t.Fatalf("the tool's result is %s %q, want Code: %s", a.Type, a.Summary, a.Payload)
	}
	raw, err := os.ReadFile(ws + "/env.txt")
	if err != nil {
		t.Fatalf("the tool wrote no env.txt: %v", err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	// The shell adds its own bookkeeping variables to what it exports.
	for _, k := range []string{"PWD", "OLDPWD", "SHLVL", "_"} {
		delete(got, k)
	}
	want := map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/home/cub", "OPENAI_API_KEY": "sk-from-a-secret",
		"SETT_INSTANCE": w.bb.Instance(), "SETT_AGENT": "me", "SETT_CLAIM_ID": f.msg.ClaimID, "SETT_WORKSPACE": ws}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("the tool sees %s=%q, want %q", k, got[k], v)
		}
		delete(got, k)
	}
	// The fetch channel's socket (sett-read), the run's own, in the
	// workspace: no credential.
	if sock := got["SETT_READ_SOCKET"]; !strings.HasPrefix(sock, ws+"/.sett-read-") || !strings.HasSuffix(sock, ".sock") {
		t.Errorf("the tool sees SETT_READ_SOCKET=%q, want a socket in its workspace", sock)
	}
	delete(got, "SETT_READ_SOCKET")
	if len(got) > 0 {
		t.Errorf("the tool sees variables nobody passed it: %v", got)
	}
}
