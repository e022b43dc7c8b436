package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/docker"
)

// pipeline takes a goal through every phase and the feedback loop: the
// reviewer rejects a Plan until it mentions tests, which only the
// planner's revision (quoting the review) does; then the auditor
// annotates the Plan (parallel) and the coder, alone, turns it into a
// CodeChange that the reviewer approves.
const pipeline = `version: "1.0"
orchestrator:
  bid_timeout: 3s
  lease_ttl: 6s
agents:
  planner:
    image: sett-example-writer:local
    command: ["sett-writer", "--type", "Plan"]
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
  reviewer:
    image: sett-example-reviewer:local
    command: ["sett-reviewer", "--require", "tests"]
    bidding_strategy: review
    consumes: ["Plan", "Code*"]
  auditor:
    image: sett-example-writer:local
    command: ["sett-writer", "--type", "AuditNote"]
    bidding_strategy: claim
    consumes: ["Plan"]
  coder:
    image: sett-example-writer:local
    command: ["sett-writer", "--type", "CodeChange"]
    bidding_strategy: exclusive
    consumes: ["Plan"]
    workspace:
      mode: rw
    resources:
      cpus: 0.5
      memory: 64MiB
`

func TestThreePhaseWorkflowThroughContainers(t *testing.T) {
	t.Parallel()
	h := setup(t)
	s := newStack(t, h, pipeline)
	s.mustUp()

	wf := s.postGoal("Add a /health endpoint")
	w := s.waitWorkflow(wf, 2*time.Minute)
	if w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: status %s (%s), want completed", wf, w.Status, w.Outcome)
	}
	arts := s.artefacts(wf)
	m := byType(arts)

	// The feedback loop: v1 rejected for not mentioning tests, v2 approved.
	plans := m["Plan"]
	if len(plans) != 2 || plans[0].Version != 1 || plans[1].Version != 2 || plans[1].LogicalID != plans[0].LogicalID {
		t.Fatalf("plans = %v, want v1 and v2 of one thread (all: %v)", types(plans), types(arts))
	}
	if !strings.Contains(plans[1].Payload, "must mention tests") {
		t.Errorf("plan v2 does not answer the review:\n%s", plans[1].Payload)
	}
	verdicts := map[string]string{} // target type+version → verdict
	for _, r := range m["Review"] {
		if r.StructuralType != blackboard.StructuralReview || r.ProducedByRole != "reviewer" {
			t.Errorf("review %s: structural type %s by %s", r.ID, r.StructuralType, r.ProducedByRole)
		}
		verdict := "approve"
		if strings.Contains(r.Payload, `"reject"`) {
			verdict = "reject"
		}
		verdicts[r.Summary] = verdict
	}
	for _, want := range []string{"rejected Plan v1", "approved Plan v2", "approved CodeChange v1"} {
		found := false
		for summary := range verdicts {
			found = found || strings.HasPrefix(summary, want)
		}
		if !found {
			t.Errorf("no review %q among %v", want, verdicts)
		}
	}

	// The three phases on the approved plan: review, then the parallel
	// auditor, then the exclusive coder.
	ctx := context.Background()
	claimID, err := s.bb.ClaimForArtefact(ctx, plans[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := s.bb.GetClaim(ctx, claimID)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != blackboard.ClaimComplete || !slices.Equal(cl.GrantedReviewAgents, []string{"reviewer"}) ||
		!slices.Equal(cl.GrantedParallelAgents, []string{"auditor"}) || cl.GrantedExclusiveAgent != "coder" {
		t.Errorf("plan v2 claim = %+v; want complete with review=[reviewer] parallel=[auditor] exclusive=coder", cl)
	}
	for typ, want := range map[string]int{"GoalDefined": 1, "AuditNote": 1, "CodeChange": 1} {
		if got := len(m[typ]); got != want {
			t.Errorf("%d %s artefacts, want %d (all: %v)", got, typ, want, types(arts))
		}
	}
	if len(m["AuditNote"]) == 1 && len(m["CodeChange"]) == 1 && m["AuditNote"][0].CreatedAtMs > m["CodeChange"][0].CreatedAtMs {
		t.Errorf("the parallel phase ended after the exclusive one: audit %d, code %d",
			m["AuditNote"][0].CreatedAtMs, m["CodeChange"][0].CreatedAtMs)
	}

	t.Run("containers are confined", func(t *testing.T) { checkConfinement(t, s) })
	t.Run("list", func(t *testing.T) {
		all, err := h.rt.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var listing runtime.Listing
		for _, l := range all {
			if l.Name == s.name {
				listing = l
			}
		}
		if listing.Status != docker.StatusRunning || listing.Runtime != "docker" || listing.Workspace != s.dir {
			t.Errorf("listing = %+v", listing)
		}
		for _, c := range []string{"redis", "orchestrator", "planner", "reviewer", "auditor", "coder"} {
			if listing.Components[c] != docker.ComponentHealthy {
				t.Errorf("component %s: %q, want healthy", c, listing.Components[c])
			}
		}
	})
}

// checkConfinement asserts how the containers of the pipeline run.
func checkConfinement(t *testing.T, s *stack) {
	for _, comp := range []string{"redis", "orchestrator", "planner", "reviewer", "auditor", "coder"} {
		c := s.container(comp).Container
		hc := c.HostConfig
		if c.Config.Labels[docker.LabelInstance] != s.name || c.Config.Labels[docker.LabelWorkspace] != s.dir {
			t.Errorf("%s: labels %v", comp, c.Config.Labels)
		}
		if hc.RestartPolicy.Name != container.RestartPolicyUnlessStopped {
			t.Errorf("%s: restart policy %q", comp, hc.RestartPolicy.Name)
		}
		if !slices.Contains(hc.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("%s: security options %v", comp, hc.SecurityOpt)
		}
		for port, bindings := range c.NetworkSettings.Ports {
			for _, b := range bindings {
				if b.HostIP.String() != "127.0.0.1" {
					t.Errorf("%s: port %s published on %s, want loopback only", comp, port, b.HostIP)
				}
			}
		}
		user := c.Config.User
		if comp == "redis" {
			user = "999:999" // the image's user
		}
		if user == "" || user == "0" || strings.HasPrefix(user, "0:") || user == "root" {
			t.Errorf("%s: runs as %q", comp, c.Config.User)
		}
		if comp != "redis" && !slices.Contains(hc.CapDrop, "ALL") {
			t.Errorf("%s: capabilities dropped %v, want ALL", comp, hc.CapDrop)
		}
	}
	coder := s.container("coder").Container
	if coder.HostConfig.NanoCPUs != 500_000_000 || coder.HostConfig.Memory != 64<<20 {
		t.Errorf("coder limits: %d nano CPUs, %d bytes; want 0.5 CPU and 64MiB", coder.HostConfig.NanoCPUs, coder.HostConfig.Memory)
	}
	for comp, wantRW := range map[string]bool{"coder": true, "planner": false} {
		var ws, cfg, mask bool
		for _, m := range s.container(comp).Container.Mounts {
			switch m.Destination {
			case "/workspace":
				ws = m.Source == s.dir && m.RW == wantRW
			case "/etc/sett/sett.yml":
				cfg = m.Source == s.configPath && !m.RW
			case "/workspace/.sett":
				mask = m.Type == mount.TypeTmpfs
			}
		}
		if !ws || !cfg || !mask {
			t.Errorf("%s mounts (workspace rw=%v ok=%v, config ro ok=%v, .sett masked=%v): %+v",
				comp, wantRW, ws, cfg, mask, s.container(comp).Container.Mounts)
		}
	}
	redis := s.container("redis").Container
	if !slices.Contains(redis.Config.Cmd, "--requirepass") || !slices.Contains(redis.Config.Cmd, "--appendonly") {
		t.Errorf("redis command %v: want a password and append-only persistence", redis.Config.Cmd)
	}
	if _, ok := redis.NetworkSettings.Ports[network.MustParsePort("6379/tcp")]; !ok {
		t.Errorf("redis is not published: %v", redis.NetworkSettings.Ports)
	}
}
