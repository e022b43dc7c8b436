package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
	"github.com/settdev/sett/pkg/blackboard"
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

// TestDockerUpOnACluster runs the Docker runtime against a Redis Cluster
// of host processes (three masters, three replicas) bound to the host's
// address on the Docker bridge, as docs/redis.md tells an operator to:
// `sett up` starts no Redis, the containers reach every node and follow
// MOVED answers to the addresses the nodes announce, and a SIGKILL of the
// master holding the instance's slot mid-run costs nothing: every
// workflow completes with exactly its artefacts.
func TestDockerUpOnACluster(t *testing.T) {
	t.Parallel()
	h := setup(t)
	host := bridgeGateway(t, h)
	tp, cl, err := redistest.StartReplicatedClusterWith(3, "cluster-pw", redistest.ServerOptions{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Stop)
	s := newStack(t, h, `version: "1.0"
orchestrator: {bid_timeout: 10s, lease_ttl: 6s}
services:
  redis:
    password: cluster-pw
    cluster:
      addresses: [`+strings.Join(cl.Addrs(), ", ")+`]
agents:
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
`)
	rec, err := s.up()
	if err != nil {
		t.Fatalf("up against the cluster: %v", err)
	}
	s.rec = rec
	if _, ok := rec.Components["redis"]; ok {
		t.Fatalf("sett up started a Redis of its own beside the cluster: components %v", rec.Components)
	}
	ctx := context.Background()
	bb, err := blackboard.DialConn(ctx, blackboard.Conn{ClusterAddrs: cl.Addrs(), Password: "cluster-pw"},
		blackboard.Options{Instance: s.name, HashTag: true})
	if err != nil {
		t.Fatal(err)
	}
	s.bb = bb
	topo, err := bb.RedisTopology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	master, err := cl.MasterOf(ctx, topo.Slot)
	if err != nil {
		t.Fatal(err)
	}

	const goals = 4
	var wfs []string
	for i := 0; i < goals; i++ {
		wfs = append(wfs, s.postGoal(fmt.Sprintf("cluster goal %d", i)))
	}
	plans := func() int {
		n := 0
		for _, wf := range wfs {
			n += len(stacktest.OfType(s.artefacts(wf), "Plan"))
		}
		return n
	}
	eventually.True(t, 2*time.Minute, "the first plan, written by a container through the cluster", func() bool { return plans() > 0 })
	raw := master.Raw()
	acked, err := raw.Wait(ctx, 1, 10*time.Second).Result()
	_ = raw.Close()
	if err != nil || acked < 1 {
		t.Fatalf("the replica did not acknowledge the writes before the kill: %d replicas, %v", acked, err)
	}
	if err := master.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var promoted *redistest.Server
	eventually.True(t, time.Minute, "a replica promoted", func() bool {
		m, err := cl.MasterOf(ctx, topo.Slot)
		if err == nil && m != master {
			promoted = m
		}
		return promoted != nil
	})
	t.Logf("killed the master %s holding slot %d; %s promoted after %s", master.Addr, topo.Slot, promoted.Addr, time.Since(killed).Round(time.Millisecond))
	// The test's own client reloads its slot map on the refused dial, as
	// the daemons' do: read until it follows the promotion.
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
