package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
)

// statusFixture is an instance with a leader, agents in every state, and
// active claims: coder granted and working, reviewer asked to bid.
type statusFixture struct {
	e              *testEnv
	s              *seeded
	working, asked string // claim ids
}

func newStatusFixture(t *testing.T) *statusFixture {
	t.Helper()
	e := newTestEnv(t)
	f := &statusFixture{e: e, s: seedWorkflow(t, e.bb)}
	ctx := t.Context()
	// sett.yml configures planner (never started) besides the registered
	// agents; its heartbeat TTL lets status compute heartbeat ages.
	cfg := "version: \"1.0\"\norchestrator:\n  agent_heartbeat_ttl: 10s\nagents:\n  planner:\n    command: [\"sett-writer\"]\n  coder:\n    command: [\"sett-writer\"]\n    role: developer\n"
	if err := os.WriteFile(filepath.Join(e.app.Dir, "sett.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"coder", "reviewer"} {
		if err := e.bb.RegisterAgent(ctx, blackboard.Registration{Name: name, Role: name, Consumer: name + "-1"}, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// retired was removed from sett.yml and has stopped: its
	// registration stays, its heartbeat is gone.
	if err := e.bb.RegisterAgent(ctx, blackboard.Registration{Name: "retired", Role: "retired", Consumer: "retired-1"}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 10*time.Second, "retired's heartbeat to expire", func() bool {
		live, err := e.bb.AgentLiveness(ctx, []string{"retired"})
		_, alive := live["retired"]
		return err == nil && !alive
	})
	if _, err := e.bb.AcquireLeadership(ctx, "orch-test", time.Minute); err != nil {
		t.Fatal(err)
	}
	wf := f.s.goal.ID
	f.working = blackboard.NewID()
	if _, err := e.bb.CreateClaim(ctx, blackboard.NewClaim{Epoch: 1,
		Claim: &blackboard.Claim{ID: f.working, ArtefactID: f.s.planV2.ID, WorkflowID: wf,
			Status: blackboard.ClaimPendingExclusive, GrantedExclusiveAgent: "coder"},
		Grants: map[string]string{"coder": "1"},
		Inbox: []blackboard.InboxMessage{{Agent: "coder", Kind: blackboard.MessageGrant, ClaimID: f.working,
			ArtefactID: f.s.planV2.ID, WorkflowID: wf, Grant: blackboard.GrantExclusive, Token: "1"}},
	}); err != nil {
		t.Fatal(err)
	}
	f.asked = blackboard.NewID()
	if _, err := e.bb.CreateClaim(ctx, blackboard.NewClaim{Epoch: 1,
		Claim: &blackboard.Claim{ID: f.asked, ArtefactID: f.s.approve.ID, WorkflowID: wf,
			Status: blackboard.ClaimPendingConsensus, ExpectedBidders: []string{"reviewer"}},
		Inbox: []blackboard.InboxMessage{{Agent: "reviewer", Kind: blackboard.MessageBidRequest, ClaimID: f.asked,
			ArtefactID: f.s.approve.ID, WorkflowID: wf, ArtefactType: "Review"}},
	}); err != nil {
		t.Fatal(err)
	}
	done := blackboard.NewGoal("finished", 0, "user", nil)
	if err := e.bb.CreateArtefact(ctx, done, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.bb.EndWorkflow(ctx, done.ID, blackboard.WorkflowCompleted, "ok", 1); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestStatusJSON(t *testing.T) {
	t.Parallel()
	f := newStatusFixture(t)
	var r statusReport
	if err := json.Unmarshal([]byte(f.e.mustRun(t, "status", "-o", "json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Instance != f.e.bb.Instance() || !r.Redis.Reachable || r.Paused {
		t.Errorf("instance %q reachable %v paused %v", r.Instance, r.Redis.Reachable, r.Paused)
	}
	if r.Leader == nil || r.Leader.Holder != "orch-test" || r.Leader.Epoch != 1 || r.Leader.TTLMs <= 0 {
		t.Errorf("leader = %+v, want orch-test at epoch 1 with a live lease", r.Leader)
	}
	if r.Workflows.Running != 1 || r.Workflows.Total != 2 || r.Workflows.ByStatus["completed"] != 1 {
		t.Errorf("workflows = %+v, want 1 running of 2", r.Workflows)
	}
	if r.Claims.Active != 2 || r.Claims.ByStatus["pending_exclusive"] != 1 || r.Claims.ByStatus["pending_consensus"] != 1 {
		t.Errorf("claims = %+v", r.Claims)
	}
	agents := map[string]agentReport{}
	for _, a := range r.Agents {
		agents[a.Name] = a
	}
	coder, reviewer, planner := agents["coder"], agents["reviewer"], agents["planner"]
	if !coder.Alive || !coder.Configured || !coder.Registered || coder.Role != "developer" || coder.Queued != 1 ||
		len(coder.Working) != 1 || coder.Working[0].ClaimID != f.working || coder.Working[0].Grant != "exclusive" ||
		coder.Working[0].ArtefactType != "Plan" || coder.HeartbeatAgeMs == nil || *coder.HeartbeatAgeMs > 10000 {
		t.Errorf("coder = %+v", coder)
	}
	if !reviewer.Alive || reviewer.Configured || reviewer.Queued != 1 || len(reviewer.Working) != 0 {
		t.Errorf("reviewer = %+v; want alive, registered only, one bid request queued, no work", reviewer)
	}
	if planner.Alive || planner.Registered || !planner.Configured || planner.Queued != 0 {
		t.Errorf("planner = %+v; want configured but never started", planner)
	}
	if len(r.Agents) != 3 {
		t.Errorf("%d agents, want 3 (not retired, removed from sett.yml and down): %+v", len(r.Agents), r.Agents)
	}
}

func TestStatusText(t *testing.T) {
	t.Parallel()
	f := newStatusFixture(t)
	out := f.e.mustRun(t, "status")
	for _, want := range []string{
		"Instance   " + f.e.bb.Instance(),
		"reachable",
		"Leader     orch-test (epoch 1, lease",
		"Paused     not paused",
		"Workflows  1 running (2 in total)",
		"Claims     2 active",
		"exclusive on Plan " + blackboard.ShortID(f.s.planV2.ID) + " (claim " + blackboard.ShortID(f.working) + ")",
		"pending_consensus  1",
		"pending_exclusive  1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if fs := strings.Fields(l); len(fs) > 0 {
			rows[fs[0]] = fs
		}
	}
	for name, want := range map[string][]string{
		"coder":    {"coder", "developer", "alive"},
		"reviewer": {"reviewer", "reviewer", "alive"},
		"planner":  {"planner", "planner", "never", "started", "-", "0", "-"},
	} {
		if got := rows[name]; len(got) < len(want) || strings.Join(got[:len(want)], " ") != strings.Join(want, " ") {
			t.Errorf("row of %s = %v, want it to start with %v", name, got, want)
		}
	}
}

func TestStatusWithoutLeaderOrAgents(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	out := e.mustRun(t, "status")
	for _, want := range []string{"Leader     none: no orchestrator holds the lease", "No agents registered or configured", "0 running (0 in total)"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

func TestStatusReportsAnUnreachableRedis(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.env["SETT_REDIS_URL"] = "redis://:secret@127.0.0.1:1/0"
	out, _, err := e.run(t, "status", "-o", "json")
	if ExitCode(err) != ExitFailure {
		t.Fatalf("exit %d (%v), want %d", ExitCode(err), err, ExitFailure)
	}
	var r statusReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Redis.Reachable || r.Redis.Error == "" || strings.Contains(r.Redis.URL, "secret") || !strings.Contains(r.Redis.URL, "127.0.0.1:1") {
		t.Errorf("redis = %+v; want unreachable with the error and the URL without its password", r.Redis)
	}
}
