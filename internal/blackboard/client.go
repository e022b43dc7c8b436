package blackboard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configure a Client.
type Options struct {
	// Instance names the Sett instance; required, a DNS label.
	Instance string
	// HashTag switches keys to the cluster-safe `sett:{<instance>}:` form.
	HashTag bool
	// OpTimeout bounds every non-blocking round trip. Zero means 5s.
	OpTimeout time.Duration
	// MaxPayloadBytes refuses larger artefact payloads before they are
	// sent. Zero means 1 MiB; it can never exceed MaxPayloadBytes.
	MaxPayloadBytes int
	// WaitReplicas, when > 0, makes every script write wait (Redis WAIT)
	// until that many replicas acknowledged it, and return
	// ErrNotReplicated when they do not within WaitTimeout. Zero: no
	// waiting (the loss bound is the replication lag). Not for a cluster.
	WaitReplicas int
	// WaitTimeout bounds each WAIT. Zero means 1s.
	WaitTimeout time.Duration
}

// Client reads and writes one instance's blackboard. It is safe for
// concurrent use; methods return the sentinel errors of errors.go (wrapped
// with identifiers) and never redis.Nil.
type Client struct {
	rdb        redis.UniversalClient
	ownsRedis  bool
	keys       Keys
	instance   string
	scripts    *scriptSet
	opTimeout  time.Duration
	maxPayload int
	// pipeBlock is the longest blocking read that may share a pipeline:
	// go-redis bounds a whole pipeline by the client's ReadTimeout.
	pipeBlock time.Duration
	// waitReplicas and waitTimeout: see Options.WaitReplicas.
	waitReplicas int
	waitTimeout  time.Duration
	// failedReads counts failed socket reads (see read_watch.go).
	failedReads *atomic.Uint64
	// sentinel is the Sentinel set DialConn dialled through, with the
	// TLS config for it (see RedisTopology); nil otherwise.
	sentinel    *SentinelConn
	sentinelTLS *tls.Config
}

// New wraps an existing go-redis client, checks the connection and preloads
// every script. The caller keeps ownership of rdb.
func New(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Client, error) {
	if err := ValidateInstance(opts.Instance); err != nil {
		return nil, err
	}
	if opts.OpTimeout <= 0 {
		opts.OpTimeout = 5 * time.Second
	}
	if opts.MaxPayloadBytes <= 0 {
		opts.MaxPayloadBytes = 1 << 20
	}
	if opts.MaxPayloadBytes > MaxPayloadBytes {
		opts.MaxPayloadBytes = MaxPayloadBytes
	}
	if opts.WaitTimeout <= 0 {
		opts.WaitTimeout = time.Second
	}
	if opts.WaitReplicas > 0 && isCluster(rdb) {
		return nil, fmt.Errorf("%w: wait_replicas is not supported on a Redis Cluster (WAIT has no key to route by); use min-replicas-to-write on the cluster's masters", ErrInvalid)
	}
	scripts, err := loadScriptSet(tryFunctions(aclUser(rdb)))
	if err != nil {
		return nil, err
	}
	c := &Client{
		rdb:        rdb,
		keys:       NewKeys(opts.Instance, opts.HashTag),
		instance:   opts.Instance,
		scripts:    scripts,
		opTimeout:  opts.OpTimeout,
		maxPayload: opts.MaxPayloadBytes,
		pipeBlock:  pipelinedBlockLimit(rdb),

		waitReplicas: opts.WaitReplicas,
		waitTimeout:  opts.WaitTimeout,
		failedReads:  watchReads(rdb),
	}
	octx, cancel := c.op(ctx)
	defer cancel()
	if err := rdb.Ping(octx).Err(); err != nil {
		return nil, fmt.Errorf("blackboard: connect to redis: %w", err)
	}
	if err := scripts.preload(octx, rdb); err != nil {
		return nil, err
	}
	return c, nil
}

// quietRedis silences go-redis's own stderr logging (dial retries, pool
// notices): every failure it would print also reaches the caller as an
// error, and the daemons log those through zerolog.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

// Dial connects to the single Redis node at url (redis:// or rediss://)
// and returns a Client that owns the connection; Close releases it. Dial
// silences go-redis's process-wide logger (see quietRedis). DialConn
// reaches Sentinel and Cluster deployments too.
func Dial(ctx context.Context, url string, opts Options) (*Client, error) {
	return DialConn(ctx, Conn{URL: url}, opts)
}

// Close releases the Redis connection when the Client owns it.
func (c *Client) Close() error {
	if c.ownsRedis {
		return c.rdb.Close()
	}
	return nil
}

// Keys returns the instance's key builder.
func (c *Client) Keys() Keys { return c.keys }

// Instance returns the instance name.
func (c *Client) Instance() string { return c.instance }

// MaxPayload returns the payload limit this client enforces on writes.
func (c *Client) MaxPayload() int { return c.maxPayload }

// Ping checks that Redis answers.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := c.op(ctx)
	defer cancel()
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("blackboard: ping: %w", err)
	}
	return nil
}

// Now returns the Redis server clock in milliseconds: the clock every
// stored timestamp and deadline uses.
func (c *Client) Now(ctx context.Context) (int64, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	t, err := c.rdb.Time(ctx).Result()
	if err != nil {
		return 0, fmt.Errorf("blackboard: time: %w", err)
	}
	return t.UnixMilli(), nil
}

// op bounds one round trip.
func (c *Client) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opTimeout)
}

// blocking bounds a blocking read: its block time plus one round trip.
func (c *Client) blocking(ctx context.Context, block time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, block+c.opTimeout)
}

// notFound maps redis.Nil to ErrNotFound with the identifiers.
func notFound(err error, what, id string) error {
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("%w: %s %s", ErrNotFound, what, id)
	}
	return fmt.Errorf("blackboard: read %s %s: %w", what, id, err)
}

// pipelinedBlockLimit derives from the client's ReadTimeout how long a
// blocking read sent in a pipeline may block: up to MaxPipelinedBlock, and
// half a second less than the timeout. Clients whose options are unknown
// never pipeline a blocking read.
func pipelinedBlockLimit(rdb redis.UniversalClient) time.Duration {
	rt, ok := readTimeout(rdb)
	if !ok {
		return 0
	}
	if rt < 0 { // -1 and -2: no read deadline at all
		return MaxPipelinedBlock
	}
	return min(MaxPipelinedBlock, rt-500*time.Millisecond)
}
