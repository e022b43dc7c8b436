package blackboard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// RedisTopology describes the Redis deployment a Client reaches, as it is
// now: which kind, and which master(s) serve it.
type RedisTopology struct {
	Kind Topology `json:"kind"`
	// Masters are the current masters: the single node, the master the
	// sentinels name, or every master of a cluster (sorted by address).
	Masters []RedisMaster `json:"masters"`
	// Slot is the instance's hash slot on a cluster (all its keys share
	// it); -1 elsewhere.
	Slot int `json:"slot"`
	// Source says who named the masters: "sentinel host:port" or
	// "cluster node map"; empty for a single node.
	Source string `json:"source,omitempty"`
}

// RedisMaster is one master of a deployment.
type RedisMaster struct {
	Addr string `json:"addr"`
	// Slots are the hash slot ranges a cluster master serves, like
	// "0-5460"; empty off a cluster.
	Slots []string `json:"slots,omitempty"`
	// Replicas are a cluster master's replicas (host:port).
	Replicas []string `json:"replicas,omitempty"`
	// Instance is true for the master that holds the instance's keys.
	Instance bool `json:"instance,omitempty"`
}

// RedisTopology asks the deployment for its current master(s): CLUSTER
// SLOTS on a cluster, SENTINEL GET-MASTER-ADDR-BY-NAME on the sentinels
// (the first that answers), the address dialled for a single node. Each
// round trip is bounded by the client's operation timeout. It returns
// the error of the deployment when none answers.
func (c *Client) RedisTopology(ctx context.Context) (RedisTopology, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	switch rdb := c.rdb.(type) {
	case *redis.ClusterClient:
		return c.clusterTopology(ctx, rdb)
	case *redis.Client:
		if c.sentinel != nil {
			return c.sentinelTopology(ctx)
		}
		return RedisTopology{Kind: TopologySingle, Slot: -1, Masters: []RedisMaster{{Addr: rdb.Options().Addr, Instance: true}}}, nil
	}
	return RedisTopology{}, fmt.Errorf("%w: redis client %T: unknown topology", ErrInvalid, c.rdb)
}

func (c *Client) clusterTopology(ctx context.Context, rdb *redis.ClusterClient) (RedisTopology, error) {
	slot, err := rdb.ClusterKeySlot(ctx, c.keys.Prefix()).Result()
	if err != nil {
		return RedisTopology{}, fmt.Errorf("blackboard: cluster keyslot: %w", err)
	}
	slots, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		return RedisTopology{}, fmt.Errorf("blackboard: cluster slots: %w", err)
	}
	t := RedisTopology{Kind: TopologyCluster, Slot: int(slot), Source: "cluster node map"}
	byAddr := map[string]*RedisMaster{}
	for _, s := range slots {
		if len(s.Nodes) == 0 {
			continue
		}
		addr := s.Nodes[0].Addr
		m := byAddr[addr]
		if m == nil {
			m = &RedisMaster{Addr: addr}
			for _, r := range s.Nodes[1:] {
				m.Replicas = append(m.Replicas, r.Addr)
			}
			byAddr[addr] = m
		}
		rng := strconv.Itoa(s.Start)
		if s.End != s.Start {
			rng += "-" + strconv.Itoa(s.End)
		}
		m.Slots = append(m.Slots, rng)
		if int64(s.Start) <= slot && slot <= int64(s.End) {
			m.Instance = true
		}
	}
	for _, m := range byAddr {
		t.Masters = append(t.Masters, *m)
	}
	sort.Slice(t.Masters, func(i, j int) bool { return t.Masters[i].Addr < t.Masters[j].Addr })
	return t, nil
}

func (c *Client) sentinelTopology(ctx context.Context) (RedisTopology, error) {
	s := c.sentinel
	var errs []error
	for _, addr := range s.Addrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: addr, Username: s.Username, Password: s.Password,
			TLSConfig: c.sentinelTLS, DialerRetries: 1})
		hp, err := sc.GetMasterAddrByName(ctx, s.MasterName).Result()
		_ = sc.Close()
		if err == nil && len(hp) == 2 {
			return RedisTopology{Kind: TopologySentinel, Slot: -1, Source: "sentinel " + addr,
				Masters: []RedisMaster{{Addr: net.JoinHostPort(hp[0], hp[1]), Instance: true}}}, nil
		}
		errs = append(errs, fmt.Errorf("sentinel %s: %w", addr, err))
	}
	return RedisTopology{}, fmt.Errorf("blackboard: no sentinel names master %q: %w", s.MasterName, errors.Join(errs...))
}
