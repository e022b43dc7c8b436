package redistest

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
)

// Topology is a production-shaped Redis — a Redis Cluster, a
// Sentinel-managed master or a TLS-only node — described the three ways
// its users need it: the blackboard.Conn a Go client dials, the
// services.redis section of sett.yml the daemons and the CLI read, and a
// plain go-redis client for callers that add hooks of their own (the
// bench harness counts its round trips). Integration tests, the bench and
// the CLI tests start the same deployments through it.
//
// Not safe for concurrent Stop calls; Stop is safe to call twice.
type Topology struct {
	// Name is "cluster", "sentinel" or "tls".
	Name string
	// Conn reaches the deployment, credentials and TLS included.
	Conn blackboard.Conn
	// YAML is the body of services.redis (not indented) for sett.yml.
	YAML string
	// HashTag is whether the deployment needs hash-tagged keys (a
	// cluster); it matches what YAML makes the config loader decide.
	HashTag bool
	// Addrs are the addresses a user would name: the cluster seeds, the
	// sentinels or the TLS node.
	Addrs []string
	// Servers are every redis-server process of the deployment (data
	// nodes first), for callers that read their pids or kill them.
	Servers []*Server

	newClient func(pool int) redis.UniversalClient
	stop      func()
	cluster   *Cluster // set by StartCluster
}

// Client returns a go-redis client on the deployment with a pool of pool
// connections (0: go-redis' default); the caller closes it.
func (t *Topology) Client(pool int) redis.UniversalClient { return t.newClient(pool) }

// Stop kills every process of the deployment and removes their data.
func (t *Topology) Stop() {
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
}

// StartCluster starts a Redis Cluster of masters nodes with password.
// node configures each node beyond the cluster settings (AOF, for
// instance); its Password, Dir, Extra and TLS are ignored. The caller
// must Stop it.
func StartCluster(masters int, password string, node ServerOptions) (*Topology, error) {
	cl, err := NewClusterWith(masters, password, node)
	if err != nil {
		return nil, err
	}
	return &Topology{
		Name:    "cluster",
		Conn:    blackboard.Conn{ClusterAddrs: cl.Addrs(), Password: cl.Password},
		YAML:    "password: " + cl.Password + "\ncluster:\n  addresses: [" + strings.Join(cl.Addrs(), ", ") + "]\n",
		HashTag: true,
		Addrs:   cl.Addrs(),
		Servers: append([]*Server(nil), cl.Nodes...),
		newClient: func(pool int) redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), Password: cl.Password, PoolSize: pool})
		},
		stop:    cl.Stop,
		cluster: cl,
	}, nil
}

// StartReplicatedCluster starts a Redis Cluster of masters masters with
// one replica each (see Cluster.AddReplicas) and returns the cluster too,
// for tests that kill a master. The caller must Stop the topology.
func StartReplicatedCluster(masters int, password string) (*Topology, *Cluster, error) {
	return StartReplicatedClusterWith(masters, password, ServerOptions{})
}

// StartReplicatedClusterWith is StartReplicatedCluster with node as the
// base options of every node (see StartCluster): a Host the Docker
// runtime's containers can reach, for instance.
func StartReplicatedClusterWith(masters int, password string, node ServerOptions) (*Topology, *Cluster, error) {
	tp, err := StartCluster(masters, password, node)
	if err != nil {
		return nil, nil, err
	}
	cl := tp.cluster
	if err := cl.AddReplicas(); err != nil {
		tp.Stop()
		return nil, nil, err
	}
	tp.Servers = append(tp.Servers, cl.Replicas...)
	return tp, cl, nil
}

// StartSentinel starts a master, a replica and a sentinel (see
// NewSentinelSet) and returns the set too, for tests that kill the
// master. The caller must Stop the topology (which stops the set).
func StartSentinel(password, sentinelPassword string) (*Topology, *SentinelSet, error) {
	return StartSentinelDetecting(password, sentinelPassword, time.Second)
}

// StartSentinelDetecting is StartSentinel with the sentinel's failure
// detection time (see NewSentinelSetDetecting).
func StartSentinelDetecting(password, sentinelPassword string, downAfter time.Duration) (*Topology, *SentinelSet, error) {
	set, err := NewSentinelSetDetecting(password, sentinelPassword, downAfter)
	if err != nil {
		return nil, nil, err
	}
	return &Topology{
		Name: "sentinel",
		Conn: blackboard.Conn{Password: set.Password, Sentinel: &blackboard.SentinelConn{
			MasterName: set.MasterName, Addrs: []string{set.Sentinel.Addr}, Password: set.SentinelPassword}},
		YAML: fmt.Sprintf("password: %s\nsentinel:\n  master_name: %s\n  addresses: [%s]\n  password: %s\n",
			set.Password, set.MasterName, set.Sentinel.Addr, set.SentinelPassword),
		Addrs:   []string{set.Sentinel.Addr},
		Servers: []*Server{set.Master, set.Replica, set.Sentinel},
		newClient: func(pool int) redis.UniversalClient {
			return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: set.MasterName,
				SentinelAddrs: []string{set.Sentinel.Addr}, SentinelPassword: set.SentinelPassword,
				Password: set.Password, PoolSize: pool})
		},
		stop: set.Stop,
	}, set, nil
}

// StartTLS starts a TLS-only Redis that requires client certificates,
// with a fresh CA and certificates written under dir/tls. node configures
// the server beyond TLS (password, AOF); its TLS is ignored. The caller
// must Stop it.
func StartTLS(dir string, node ServerOptions) (*Topology, error) {
	files, err := NewTLSFiles(filepath.Join(dir, "tls"))
	if err != nil {
		return nil, err
	}
	node.TLS = files
	srv, err := NewServer(node)
	if err != nil {
		return nil, err
	}
	return &Topology{
		Name: "tls",
		Conn: blackboard.Conn{URL: srv.URL(), TLS: files.ClientConfig()},
		YAML: fmt.Sprintf("url: %s\ntls:\n  ca_file: %s\n  cert_file: %s\n  key_file: %s\n  server_name: %s\n",
			srv.URL(), files.CA, files.ClientCert, files.ClientKey, files.ServerName),
		Addrs:   []string{srv.Addr},
		Servers: []*Server{srv},
		newClient: func(pool int) redis.UniversalClient {
			return redis.NewClient(&redis.Options{Addr: srv.Addr, Password: srv.Password, TLSConfig: files.ClientConfig(), PoolSize: pool})
		},
		stop: srv.Stop,
	}, nil
}
