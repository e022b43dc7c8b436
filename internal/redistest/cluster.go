package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of real redis-server processes on loopback,
// masters only, with the 16384 slots split evenly between them.
type Cluster struct {
	Nodes    []*Server
	Password string
	// Replicas are the replicas AddReplicas started, Replicas[i] of
	// Nodes[i].
	Replicas []*Server
	// host is the nodes' address (ServerOptions.Host), replicas' too.
	host string
}

// NewCluster starts masters cluster-enabled servers, assigns the slots,
// joins them with CLUSTER MEET and waits until every node reports
// cluster_state:ok. The caller must Stop it.
func NewCluster(masters int, password string) (*Cluster, error) {
	return NewClusterWith(masters, password, ServerOptions{})
}

// NewClusterWith is NewCluster with node as the base options of every
// node (AOF, for a benchmark that compares with a persistent single
// node); its Password, Dir, Extra and TLS are replaced.
func NewClusterWith(masters int, password string, node ServerOptions) (*Cluster, error) {
	if masters < 1 {
		return nil, fmt.Errorf("redistest: a cluster needs at least one master, not %d", masters)
	}
	c := &Cluster{Password: password, host: node.Host}
	for i := 0; i < masters; i++ {
		busPort, err := FreePort()
		if err != nil {
			c.Stop()
			return nil, err
		}
		opts := node
		opts.Password, opts.Dir, opts.TLS = password, "", nil
		opts.Extra = []string{
			"cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 2000",
			"cluster-port " + strconv.Itoa(busPort), "masterauth " + password,
		}
		opts.Extra = append(opts.Extra, c.announce()...)
		srv, err := NewServer(opts)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, srv)
	}
	if err := c.form(busPorts(c)); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// announce is the nodes' cluster-announce-ip when they bind to an address
// of their own: otherwise a node announces the source address its peers
// see, which on a host with NAT rules need not be the bound one.
func (c *Cluster) announce() []string {
	if c.host == "" {
		return nil
	}
	return []string{"cluster-announce-ip " + c.host}
}

// busPorts reads each node's cluster bus port back from its config.
func busPorts(c *Cluster) []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		for _, l := range n.extra {
			if p, ok := strings.CutPrefix(l, "cluster-port "); ok {
				out[i] = p
			}
		}
	}
	return out
}

func (c *Cluster) form(bus []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	per := 16384 / len(c.Nodes)
	for i, n := range c.Nodes {
		rdb := n.Raw()
		lo, hi := i*per, (i+1)*per-1
		if i == len(c.Nodes)-1 {
			hi = 16383
		}
		err := rdb.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err()
		if err == nil && i > 0 {
			host, port := hostPort(c.Nodes[0].Addr)
			err = rdb.Do(ctx, "CLUSTER", "MEET", host, port, bus[0]).Err()
		}
		_ = rdb.Close()
		if err != nil {
			return fmt.Errorf("redistest: cluster node %s: %w", n.Addr, err)
		}
	}
	// Poll every node's view against one deadline: gossip needs a few
	// rounds before all of them agree that every slot is served.
	for _, n := range c.Nodes {
		rdb := n.Raw()
		for {
			info, err := rdb.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.Nodes))) {
				break
			}
			if ctx.Err() != nil {
				_ = rdb.Close()
				return fmt.Errorf("redistest: cluster not ok after 30s (node %s: %q, %v)", n.Addr, firstLine(info), err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
		_ = rdb.Close()
	}
	return nil
}

// Addrs are the nodes' host:port, the seeds a cluster client needs.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// Client is a go-redis cluster client on the cluster; the caller closes it.
func (c *Cluster) Client() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), Password: c.Password})
}

// Stop kills every node and removes their data.
func (c *Cluster) Stop() {
	for _, n := range append(append([]*Server(nil), c.Nodes...), c.Replicas...) {
		n.Stop()
	}
}

// AddReplicas starts one replica per master (cluster-node-timeout 2000,
// like the masters, so a replica is promoted about 2–3 s after its
// master dies), joins each to its master with CLUSTER REPLICATE and
// waits until every replica is in sync and every node knows all the
// others.
func (c *Cluster) AddReplicas() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seedHost, seedPort := hostPort(c.Nodes[0].Addr)
	seedBus := busPorts(c)[0]
	for _, m := range c.Nodes {
		busPort, err := FreePort()
		if err != nil {
			return err
		}
		srv, err := NewServer(ServerOptions{Password: c.Password, Host: c.host, Extra: append([]string{
			"cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 2000",
			"cluster-port " + strconv.Itoa(busPort), "masterauth " + c.Password,
		}, c.announce()...)})
		if err != nil {
			return err
		}
		c.Replicas = append(c.Replicas, srv)
		mr := m.Raw()
		id, err := mr.Do(ctx, "CLUSTER", "MYID").Text()
		_ = mr.Close()
		if err != nil {
			return fmt.Errorf("redistest: cluster myid of %s: %w", m.Addr, err)
		}
		rr := srv.Raw()
		err = rr.Do(ctx, "CLUSTER", "MEET", seedHost, seedPort, seedBus).Err()
		// CLUSTER REPLICATE needs the master in the node table: poll
		// until gossip brought it.
		for err == nil {
			if err = rr.Do(ctx, "CLUSTER", "REPLICATE", id).Err(); err == nil || ctx.Err() != nil {
				break
			}
			err = nil
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
		_ = rr.Close()
		if err != nil {
			return fmt.Errorf("redistest: replica %s of %s: %w", srv.Addr, m.Addr, err)
		}
	}
	all := append(append([]*Server(nil), c.Nodes...), c.Replicas...)
	for _, n := range all {
		rdb := n.Raw()
		for {
			info, err := rdb.ClusterInfo(ctx).Result()
			repl, _ := rdb.Info(ctx, "replication").Result()
			synced := !strings.Contains(repl, "role:slave") || strings.Contains(repl, "master_link_status:up")
			if err == nil && synced && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(all))) {
				break
			}
			if ctx.Err() != nil {
				_ = rdb.Close()
				return fmt.Errorf("redistest: cluster with replicas not ready after 60s (node %s: %q, %v)", n.Addr, firstLine(info), err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
		_ = rdb.Close()
	}
	return nil
}

// MasterOf returns the data node that serves slot now, according to
// CLUSTER SLOTS asked of the live nodes (the first that answers). A dead
// node is passed over after one refused dial (not go-redis' five, 100 ms
// apart), so that a caller polling for a promotion sees it at once.
func (c *Cluster) MasterOf(ctx context.Context, slot int) (*Server, error) {
	var lastErr error
	for _, n := range append(append([]*Server(nil), c.Nodes...), c.Replicas...) {
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr, Password: c.Password, DialerRetries: 1})
		slots, err := rdb.ClusterSlots(ctx).Result()
		_ = rdb.Close()
		if err != nil {
			lastErr = err
			continue
		}
		for _, s := range slots {
			if s.Start <= slot && slot <= s.End && len(s.Nodes) > 0 {
				for _, m := range append(append([]*Server(nil), c.Nodes...), c.Replicas...) {
					if m.Addr == s.Nodes[0].Addr {
						return m, nil
					}
				}
				return nil, fmt.Errorf("redistest: slot %d is served by %s, not a node of this cluster", slot, s.Nodes[0].Addr)
			}
		}
		return nil, fmt.Errorf("redistest: slot %d is not served", slot)
	}
	return nil, fmt.Errorf("redistest: no node answers CLUSTER SLOTS: %w", lastErr)
}

func hostPort(addr string) (string, string) {
	i := strings.LastIndexByte(addr, ':')
	return addr[:i], addr[i+1:]
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}
