package blackboard

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
)

// Conn says how to reach Redis: one node (URL), a Sentinel-managed master
// (Sentinel) or a Redis Cluster (ClusterAddrs). Exactly one of the three is
// set. Every topology becomes one redis.UniversalClient, so the rest of
// the package never knows which it talks to.
//
// The zero value is invalid; DialConn reports it.
type Conn struct {
	// URL is a redis:// or rediss:// URL of one node. Its user and
	// password, when present, win over Username and Password.
	URL string
	// Sentinel, when set, asks the sentinels for the current master and
	// follows failovers.
	Sentinel *SentinelConn
	// ClusterAddrs are seed nodes of a Redis Cluster (host:port). A cluster
	// needs HashTag keys: DialConn refuses it otherwise.
	ClusterAddrs []string
	// Username is the ACL user ("" means the default user).
	Username string
	// Password authenticates Username ("" means no AUTH).
	Password string
	// TLS, when set, encrypts every connection (data nodes and sentinels).
	// A rediss:// URL without TLS gets a default config that verifies the
	// server against the system roots.
	TLS *tls.Config
	// PoolSize is the connection pool per node; zero means 32 (blocking
	// stream reads hold a connection each).
	PoolSize int
}

// SentinelConn names a Sentinel-managed master.
type SentinelConn struct {
	// MasterName is the name the sentinels monitor the master under.
	MasterName string
	// Addrs are the sentinels (host:port); at least one.
	Addrs []string
	// Username and Password authenticate to the sentinels, which often
	// have credentials of their own; empty means none.
	Username string
	Password string
}

// Topology names the kind of Redis deployment a Conn reaches.
type Topology string

// Topologies.
const (
	TopologySingle   Topology = "single"
	TopologySentinel Topology = "sentinel"
	TopologyCluster  Topology = "cluster"
)

// Topology reports which deployment c describes, or "" when it describes
// none or several.
func (c Conn) Topology() Topology {
	n := 0
	var t Topology
	if c.URL != "" {
		n, t = n+1, TopologySingle
	}
	if c.Sentinel != nil {
		n, t = n+1, TopologySentinel
	}
	if len(c.ClusterAddrs) > 0 {
		n, t = n+1, TopologyCluster
	}
	if n != 1 {
		return ""
	}
	return t
}

// Buffer sizes of every connection. go-redis gives each connection 32 KiB
// read and write buffers (128 KiB in its pipeline pool): with a daemon's
// 5–7 connections, about half of its idle heap. Sett's commands and
// replies are small, and a larger payload (an artefact's body) passes a
// bufio buffer in reads and writes of its own, so smaller buffers cost
// no round trip. Measured with make bench: idle RSS of the orchestrator
// 0.5–0.8 MB lower, of a cub 0.3 MB lower, throughput unchanged.
const (
	connBufferSize     = 8 << 10
	pipelineBufferSize = 16 << 10
)

// universal builds the go-redis client for c without connecting.
func (c Conn) universal() (redis.UniversalClient, error) {
	pool := c.PoolSize
	if pool <= 0 {
		pool = 32
	}
	switch c.Topology() {
	case TopologySingle:
		ro, err := redis.ParseURL(c.URL)
		if err != nil {
			return nil, fmt.Errorf("%w: redis url: %v (use redis://host:6379/0 or rediss://host:6380/0)", ErrInvalid, err)
		}
		if err := refuseURLSkipVerify(c.URL); err != nil {
			return nil, err
		}
		if ro.Username == "" && ro.Password == "" {
			ro.Username, ro.Password = c.Username, c.Password
		}
		if c.TLS != nil {
			if ro.TLSConfig == nil {
				return nil, fmt.Errorf("%w: redis url %s: TLS settings need a rediss:// URL", ErrInvalid, redactURL(c.URL))
			}
			tc := c.TLS.Clone()
			if tc.ServerName == "" {
				tc.ServerName = ro.TLSConfig.ServerName
			}
			ro.TLSConfig = tc
		}
		ro.PoolSize = max(ro.PoolSize, pool)
		ro.ReadBufferSize, ro.WriteBufferSize = connBufferSize, connBufferSize
		ro.PipelineReadBufferSize, ro.PipelineWriteBufferSize = pipelineBufferSize, pipelineBufferSize
		return redis.NewClient(ro), nil
	case TopologySentinel:
		s := c.Sentinel
		if s.MasterName == "" {
			return nil, fmt.Errorf("%w: sentinel: master_name is empty (name the master the sentinels monitor)", ErrInvalid)
		}
		if len(s.Addrs) == 0 {
			return nil, fmt.Errorf("%w: sentinel: no sentinel addresses (list host:port of at least one sentinel)", ErrInvalid)
		}
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: s.MasterName, SentinelAddrs: s.Addrs,
			SentinelUsername: s.Username, SentinelPassword: s.Password,
			Username: c.Username, Password: c.Password,
			TLSConfig: c.TLS, PoolSize: pool,
			ReadBufferSize: connBufferSize, WriteBufferSize: connBufferSize,
			PipelineReadBufferSize: pipelineBufferSize, PipelineWriteBufferSize: pipelineBufferSize,
		}), nil
	case TopologyCluster:
		// (No pipeline sizes: on a cluster client they would create a
		// pipeline pool it does not have by default.)
		cc := redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: c.ClusterAddrs, Username: c.Username, Password: c.Password,
			TLSConfig: c.TLS, PoolSize: pool,
			ReadBufferSize: connBufferSize, WriteBufferSize: connBufferSize,
			// One dial per attempt: a dead master refuses at once, and
			// go-redis' default (5 dials 100 ms apart) would hold every
			// command and every slot-map reload that picks it for half a
			// second. The callers retry; slotRefresh reroutes.
			DialerRetries: 1,
		})
		cc.AddHook(slotRefresh{reload: cc.ReloadState})
		return cc, nil
	}
	return nil, fmt.Errorf("%w: redis connection: set exactly one of a URL, a sentinel or cluster addresses", ErrInvalid)
}

// refuseURLSkipVerify refuses a URL that turns certificate checks off:
// skipping verification must be an explicit, visible setting
// (Conn.TLS.InsecureSkipVerify), never a query parameter.
func refuseURLSkipVerify(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return nil // ParseURL reported it
	}
	if u.Query().Has("skip_verify") {
		return fmt.Errorf("%w: redis url %s: skip_verify in the URL is refused: verify the server (tls.ca_file) or, for a test setup only, set services.redis.tls.insecure_skip_verify: true", ErrInvalid, redactURL(raw))
	}
	return nil
}

// redactURL hides the password of a URL for error messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// DialConn connects to the Redis that conn describes and returns a Client
// that owns the connection; Close releases it. A cluster needs
// opts.HashTag (every script's keys must share one slot): without it
// DialConn returns ErrInvalid. Errors wrap ErrInvalid for bad settings.
func DialConn(ctx context.Context, conn Conn, opts Options) (*Client, error) {
	quietOnce.Do(func() { redis.SetLogger(quietRedis{}) })
	if conn.Topology() == TopologyCluster && !opts.HashTag {
		return nil, fmt.Errorf("%w: Redis Cluster needs hash-tagged keys (every script's keys in one slot): leave services.redis.hash_tag unset or set it to true", ErrInvalid)
	}
	rdb, err := conn.universal()
	if err != nil {
		return nil, err
	}
	c, err := New(ctx, rdb, opts)
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	c.ownsRedis = true
	c.sentinel, c.sentinelTLS = conn.Sentinel, conn.TLS
	return c, nil
}

// readTimeout is the configured read timeout of any of go-redis's
// clients, and whether it is known.
func readTimeout(rdb redis.UniversalClient) (time.Duration, bool) {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ReadTimeout, true
	case *redis.ClusterClient:
		return c.Options().ReadTimeout, true
	}
	return 0, false
}

// isCluster reports whether rdb spreads keys over cluster slots.
func isCluster(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.ClusterClient)
	return ok
}
