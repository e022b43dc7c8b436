package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
)

// The orchestrator container restarts while a tool runs; the workflow
// still completes. The planner's tool marks that it started in the rw
// workspace and then waits there for a file the test writes only after
// the restart, so the workflow is provably mid-flight across it.
func TestOrchestratorRestartMidWorkflow(t *testing.T) {
	t.Parallel()
	h := setup(t)
	s := newStack(t, h, `version: "1.0"
orchestrator:
  bid_timeout: 3s
  lease_ttl: 6s
agents:
  planner:
    image: sett-example-writer:local
    command:
      - sh
      - -c
      - touch /workspace/started; while [ ! -e /workspace/go ]; do sleep 0.1; done; exec sett-writer --type Plan
    consumes: ["GoalDefined"]
    workspace:
      mode: rw
  reviewer:
    # No command: the image's CMD (sett-reviewer, which approves).
    image: sett-example-reviewer:local
    bidding_strategy: review
    consumes: ["Plan"]
`)
	s.mustUp()
	ctx := context.Background()
	wf := s.postGoal("Survive a restart")
	started := filepath.Join(s.dir, "started")
	eventually.True(t, time.Minute, "the planner's tool to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})

	orch := s.rec.Components["orchestrator"].Container
	before := s.container("orchestrator").Container.State.StartedAt
	timeout := 10
	if _, err := h.cli.ContainerRestart(ctx, orch, client.ContainerRestartOptions{Timeout: &timeout}); err != nil {
		t.Fatal(err)
	}
	after := s.container("orchestrator").Container
	if after.State.StartedAt == before || !after.State.Running {
		t.Fatalf("orchestrator not restarted: started %s → %s, running %v", before, after.State.StartedAt, after.State.Running)
	}
	// The published port survives the restart: the record stays right.
	addr := s.rec.Components["orchestrator"].HTTPAddr
	var now []string
	for _, b := range after.NetworkSettings.Ports[network.MustParsePort("8080/tcp")] {
		now = append(now, b.HostIP.String()+":"+b.HostPort)
	}
	if len(now) != 1 || now[0] != addr {
		t.Errorf("after the restart the orchestrator is published on %v, the record says %s", now, addr)
	}
	hc := &http.Client{Timeout: time.Second}
	eventually.True(t, time.Minute, "the restarted orchestrator to be ready", func() bool {
		resp, err := hc.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	w, err := s.bb.GetWorkflow(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	if w.Status.Final() {
		t.Fatalf("the workflow ended before the tool was released: %s (%s)", w.Status, w.Outcome)
	}

	if err := os.WriteFile(filepath.Join(s.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w = s.waitWorkflow(wf, 2*time.Minute)
	if w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: status %s (%s), want completed", wf, w.Status, w.Outcome)
	}
	m := byType(s.artefacts(wf))
	if len(m["Plan"]) != 1 || len(m["Review"]) != 1 {
		t.Errorf("artefacts %v: want the Plan written after the restart and its Review", m)
	}
}
