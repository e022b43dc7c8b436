package blackboard

import (
	"context"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

type (
	// Options configure a Client: Instance (required) is the instance
	// name `sett status` shows; HashTag must match the instance's
	// services.redis.hash_tag. The other fields have working defaults.
	Options = blackboard.Options
	// Conn says how to reach a Redis that one URL cannot describe: a
	// Sentinel-managed master, a Redis Cluster, TLS or an ACL user.
	Conn = blackboard.Conn
	// SentinelConn names a Sentinel-managed master (see Conn).
	SentinelConn = blackboard.SentinelConn
)

// Client reads and writes one instance's blackboard on behalf of a
// person or a program. It is safe for concurrent use.
type Client struct {
	bb *blackboard.Client
	// watchBlock is how long one read of WatchWorkflow blocks before it
	// looks at the workflow itself.
	watchBlock time.Duration
}

// newClient wraps an engine client.
func newClient(bb *blackboard.Client) *Client {
	return &Client{bb: bb, watchBlock: watchBlock}
}

// Dial connects to the instance opts.Instance in the Redis at url
// (redis:// or rediss://, the URL `sett status` shows) and checks the
// connection. Close releases it. Errors wrap ErrInvalid for bad settings.
func Dial(ctx context.Context, url string, opts Options) (*Client, error) {
	bb, err := blackboard.Dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	return newClient(bb), nil
}

// DialConn connects through conn, as the daemons do for Sentinel,
// Cluster, TLS and ACL users. Close releases the connection.
func DialConn(ctx context.Context, conn Conn, opts Options) (*Client, error) {
	bb, err := blackboard.DialConn(ctx, conn, opts)
	if err != nil {
		return nil, err
	}
	return newClient(bb), nil
}

// Close releases the connection.
func (c *Client) Close() error { return c.bb.Close() }

// Instance returns the instance name the client works on.
func (c *Client) Instance() string { return c.bb.Instance() }

// Ping checks that Redis answers.
func (c *Client) Ping(ctx context.Context) error { return c.bb.Ping(ctx) }
