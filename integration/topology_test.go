package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// topology is a production-shaped Redis the core scenarios run against
// (internal/redistest starts it; the bench starts the same ones).
type topology struct{ *redistest.Topology }

func (tp topology) stack(t *testing.T, config string) *stacktest.Stack {
	return stacktest.New(t, config, stacktest.Options{Conn: &tp.Conn, RedisYAML: tp.YAML, HashTag: tp.HashTag})
}

// clusterTopology starts a 3-master Redis Cluster.
func clusterTopology(t *testing.T) topology {
	tp, err := redistest.StartCluster(3, "cluster-pw", redistest.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Stop)
	return topology{tp}
}

// sentinelTopology starts a master, a replica and a sentinel.
func sentinelTopology(t *testing.T) (topology, *redistest.SentinelSet) {
	tp, set, err := redistest.StartSentinel("data-pw", "sentinel-pw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Stop)
	return topology{tp}, set
}

// tlsTopology starts a TLS-only Redis that requires client certificates.
func tlsTopology(t *testing.T) topology {
	tp, err := redistest.StartTLS(t.TempDir(), redistest.ServerOptions{Password: "tls-pw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Stop)
	return topology{tp}
}

// TestCoreScenariosOnProductionRedis runs the three-phase pipeline, the
// feedback loop and a cub crash against a Redis Cluster, a Sentinel-managed
// master and a TLS-only Redis.
func TestCoreScenariosOnProductionRedis(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test: needs redis-server (run without -short)")
	}
	topologies := []struct {
		name  string
		start func(t *testing.T) topology
	}{
		{name: "cluster", start: clusterTopology},
		{name: "sentinel", start: func(t *testing.T) topology { tp, _ := sentinelTopology(t); return tp }},
		{name: "tls", start: tlsTopology},
	}
	for _, top := range topologies {
		t.Run(top.name, func(t *testing.T) {
			tp := top.start(t)
			t.Run("three phases", func(t *testing.T) {
				t.Parallel()
				s := tp.stack(t, pipeline)
				s.Up("planner", "reviewer", "auditor", "coder")
				wf := s.PostGoal("Add a /health endpoint")
				if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
					t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
				}
				arts := s.Artefacts(wf)
				for typ, want := range map[string]int{"GoalDefined": 1, "Plan": 1, "Review": 1, "AuditNote": 1, "CodeChange": 1} {
					if got := len(stacktest.OfType(arts, typ)); got != want {
						t.Errorf("%d %s artefacts, want %d", got, typ, want)
					}
				}
			})
			t.Run("feedback loop", func(t *testing.T) {
				t.Parallel()
				s := tp.stack(t, reviewLoop(`orchestrator: {bid_timeout: 2s}`, `, "--require", "tests"`))
				s.Up("planner", "reviewer")
				wf := s.PostGoal("Add a /health endpoint")
				if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
					t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
				}
				plans := stacktest.OfType(s.Artefacts(wf), "Plan")
				if len(plans) != 2 || plans[1].Version != 2 || !strings.Contains(plans[1].Payload, "The Plan must mention tests.") {
					t.Fatalf("%d plans, want v1 rejected and v2 addressing the feedback", len(plans))
				}
			})
			t.Run("cub crash", func(t *testing.T) {
				t.Parallel()
				s := tp.stack(t, `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 1s, agent_heartbeat_ttl: 1s, max_grant_attempts: 2}
agents:
  planner: {command: `+firstRunHangs+`, bidding_strategy: exclusive, consumes: ["GoalDefined"]}
`)
				_, cubs := s.Up("planner")
				wf := s.PostGoal("retry me")
				s.Eventually(wait, "the tool's first run", func() bool {
					_, err := os.Stat(filepath.Join(s.Dir, "first-run"))
					return err == nil
				})
				cubs["planner"].Kill()
				cubs["planner"].Restart()
				if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
					t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
				}
				cl, err := s.BB.GetClaim(context.Background(), blackboard.DeriveID("claim", wf))
				if err != nil {
					t.Fatal(err)
				}
				// One plan, written by a run that held the grant: token 2
				// when the orchestrator's lease check re-granted first,
				// token 1 when the restarted cub resumed its own pending
				// grant before that (its lease had lapsed but the grant was
				// still current). Either way the hung first run never wrote.
				plans := stacktest.OfType(s.Artefacts(wf), "Plan")
				if cl.Status != blackboard.ClaimComplete || len(plans) != 1 {
					t.Fatalf("claim %s, %d plans; want complete with exactly one plan", cl.Status, len(plans))
				}
				if tok := plans[0].Metadata["token"]; tok != "1" && tok != "2" {
					t.Fatalf("plan written under grant token %q; want 1 (resumed) or 2 (re-granted)", tok)
				}
			})
		})
	}
}
