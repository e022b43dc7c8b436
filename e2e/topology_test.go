package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// bridgeGateway is the Docker host's address on the default bridge
// network: what containers on any of the host's bridges reach the host's
// own processes by (docs/redis.md, "Docker runtime").
func bridgeGateway(t *testing.T, h *harness) string {
	t.Helper()
	res, err := h.cli.NetworkInspect(context.Background(), "bridge", client.NetworkInspectOptions{})
	if err != nil {
		t.Fatalf("inspect Docker's bridge network: %v", err)
	}
	for _, c := range res.Network.IPAM.Config {
		if c.Gateway.IsValid() && c.Gateway.Is4() {
			return c.Gateway.String()
		}
		// Docker leaves the gateway out of the default bridge's IPAM
		// when it chose it itself: the subnet's first address.
		if c.Subnet.IsValid() && c.Subnet.Addr().Is4() {
			return c.Subnet.Masked().Addr().Next().String()
		}
	}
	t.Fatalf("Docker's bridge network has no IPv4 gateway: %+v", res.Network.IPAM.Config)
	return ""
}

// dockerFailoverAgents take a second per CodeChange, so that workflows
// are in flight when the master dies.
const dockerFailoverAgents = `agents:
  planner:
    image: sett-example-writer:local
    command: ["sett-writer", "--type", "Plan"]
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
  coder:
    image: sett-example-writer:local
    command: ["/bin/sh", "-c", "sleep 1; exec sett-writer --type CodeChange"]
    bidding_strategy: exclusive
    consumes: ["Plan"]
`

// dockerFailover brings up the Docker runtime against an external
// topology (services.redis in redisYAML), posts goals, SIGKILLs the
// master holding the instance's keys once the first plan is in (and the
// replica has it), and checks every workflow completes with exactly its
// artefacts. master names the current master; it is polled until it
// changes (the promotion).
func dockerFailover(t *testing.T, h *harness, redisYAML string, conn blackboard.Conn, master func(context.Context, *blackboard.Client) (*redistest.Server, error)) {
	t.Helper()
	s := newStack(t, h, "version: \"1.0\"\norchestrator: {bid_timeout: 15s, lease_ttl: 6s}\nservices:\n  redis:\n"+redisYAML+dockerFailoverAgents)
	rec, err := s.up()
	if err != nil {
		t.Fatalf("up against the external Redis: %v", err)
	}
	s.rec = rec
	if _, ok := rec.Components["redis"]; ok {
		t.Fatalf("sett up started a Redis of its own beside the external one: components %v", rec.Components)
	}
	ctx := context.Background()
	bb, err := blackboard.DialConn(ctx, conn, blackboard.Options{Instance: s.name, HashTag: conn.Topology() == blackboard.TopologyCluster})
	if err != nil {
		t.Fatal(err)
	}
	s.bb = bb
	old, err := master(ctx, bb)
	if err != nil {
		t.Fatal(err)
	}

	const goals = 4
	var wfs []string
	for i := 0; i < goals; i++ {
		wfs = append(wfs, s.postGoal(fmt.Sprintf("failover goal %d", i)))
	}
	plans := func() int {
		n := 0
		for _, wf := range wfs {
			n += len(stacktest.OfType(s.artefacts(wf), "Plan"))
		}
		return n
	}
	eventually.True(t, 2*time.Minute, "the first plan, written by a container through the external Redis", func() bool { return plans() > 0 })
	raw := old.Raw()
	acked, err := raw.Wait(ctx, 1, 10*time.Second).Result()
	_ = raw.Close()
	if err != nil || acked < 1 {
		t.Fatalf("the replica did not acknowledge the writes before the kill: %d replicas, %v", acked, err)
	}
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var promoted *redistest.Server
	eventually.True(t, time.Minute, "a replica promoted", func() bool {
		m, err := master(ctx, bb)
		if err == nil && m != old {
			promoted = m
		}
		return promoted != nil
	})
	t.Logf("killed the master %s; %s promoted after %s", old.Addr, promoted.Addr, time.Since(killed).Round(time.Millisecond))
	// The test's own client follows the promotion as the daemons' do
	// (on the next refused dial): read until it has.
	eventually.True(t, time.Minute, "the test's client to follow the promotion", func() bool {
		_, err := bb.GetWorkflow(ctx, wfs[0])
		return err == nil
	})
	for _, wf := range wfs {
		if w := s.waitWorkflow(wf, 3*time.Minute); w.Status != blackboard.WorkflowCompleted {
			t.Fatalf("workflow %s: %s (%s), want completed", wf, w.Status, w.Outcome)
		}
		arts := s.artefacts(wf)
		for typ, want := range map[string]int{"GoalDefined": 1, "Plan": 1, "CodeChange": 1} {
			if got := len(stacktest.OfType(arts, typ)); got != want {
				t.Errorf("workflow %s: %d %s artefacts, want %d (nothing lost, nothing doubled)", wf, got, typ, want)
			}
		}
	}
}

// TestDockerUpOnACluster runs the Docker runtime against a Redis Cluster
// of host processes (three masters, three replicas) bound to the host's
// address on the Docker bridge, as docs/redis.md tells an operator to:
// `sett up` starts no Redis, the containers reach every node and follow
// MOVED answers to the addresses the nodes announce, and a SIGKILL of the
// master holding the instance's slot mid-run costs nothing.
func TestDockerUpOnACluster(t *testing.T) {
	t.Parallel()
	h := setup(t)
	tp, cl, err := redistest.StartReplicatedClusterWith(3, "cluster-pw", redistest.ServerOptions{Host: bridgeGateway(t, h)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Stop)
	slot := -1
	dockerFailover(t, h, "    password: cluster-pw\n    cluster:\n      addresses: ["+strings.Join(cl.Addrs(), ", ")+"]\n",
		blackboard.Conn{ClusterAddrs: cl.Addrs(), Password: "cluster-pw"},
		func(ctx context.Context, bb *blackboard.Client) (*redistest.Server, error) {
			if slot < 0 { // asked once, while every node answers
				tp, err := bb.RedisTopology(ctx)
				if err != nil {
					return nil, err
				}
				slot = tp.Slot
			}
			return cl.MasterOf(ctx, slot)
		})
}

// TestDockerUpOnASentinelSet is TestDockerUpOnACluster against a master,
// a replica and a sentinel on the Docker bridge address (each announcing
// it), with a 5-s failure detection as a managed service has: the
// containers follow the sentinel to the promoted replica.
func TestDockerUpOnASentinelSet(t *testing.T) {
	t.Parallel()
	h := setup(t)
	set, err := redistest.NewSentinelSetOn(bridgeGateway(t, h), "data-pw", "sentinel-pw", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Stop)
	dockerFailover(t, h, "    password: data-pw\n    sentinel:\n      master_name: "+set.MasterName+
		"\n      addresses: ["+set.Sentinel.Addr+"]\n      password: sentinel-pw\n",
		blackboard.Conn{Password: "data-pw", Sentinel: &blackboard.SentinelConn{
			MasterName: set.MasterName, Addrs: []string{set.Sentinel.Addr}, Password: "sentinel-pw"}},
		func(ctx context.Context, _ *blackboard.Client) (*redistest.Server, error) {
			addr, err := set.MasterAddr(ctx)
			if err != nil {
				return nil, err
			}
			for _, s := range []*redistest.Server{set.Master, set.Replica} {
				if s.Addr == addr {
					return s, nil
				}
			}
			return nil, fmt.Errorf("the sentinel names %s, which is not in the set", addr)
		})
}
