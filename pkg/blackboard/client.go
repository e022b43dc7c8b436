package blackboard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/connect"
	"github.com/settdev/sett/internal/redisconn"
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
	// workspace is the workspace DialEnv resolved from, whose sett.yml
	// says whether a rejection may come without a reason
	// (RejectWithoutReason); "" for Dial and DialConn.
	workspace string
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

// EnvOptions configure DialEnv. The zero value resolves from the working
// directory, as a sett command run there does.
type EnvOptions struct {
	// Dir is the directory to resolve from, as if sett ran there: the
	// workspace (its sett.yml and instance records) is the nearest
	// directory above it holding sett.yml or .sett, and a compose stack's
	// .env is read from Dir itself. "" is the working directory.
	Dir string
	// Instance names the instance, as `sett --name` does: it wins over
	// SETT_INSTANCE, sett.yml and the instance records. "" leaves the
	// choice to them.
	Instance string
	// OpTimeout bounds each Redis round trip, as Options.OpTimeout; zero
	// is its default (5 s).
	OpTimeout time.Duration
}

// DialEnv connects to the instance that a sett command run in opts.Dir
// reaches, and checks the connection: it resolves the Redis and the
// instance with the CLI's own code, so a program needs no more settings
// than `sett status` does. Close releases the connection. The first of
// these that applies decides:
//
//  1. SETT_REDIS_URL: that Redis, with the URL's own user and password
//     (SETT_REDIS_PASSWORD and sett.yml are then not read for the
//     connection). The instance is opts.Instance, else SETT_INSTANCE,
//     else the workspace's running instance (its record).
//  2. No running instance record (`sett up` writes one): a compose stack
//     in opts.Dir (docker-compose.yml and a .env naming
//     SETT_REDIS_PASSWORD, as `sett init --compose` writes them) whose
//     instance is the one named, or any when none is: its Redis on
//     127.0.0.1.
//  3. The sett.yml of the running instance's workspace (else of the
//     workspace) names an external Redis in services.redis (url, sentinel
//     or cluster): reached as the daemons reach it (TLS files, ACL user),
//     with SETT_REDIS_PASSWORD, SETT_REDIS_USERNAME,
//     SETT_REDIS_SENTINEL_PASSWORD and SETT_HASH_TAG over the file's
//     values; a single node keeps the password in the instance record.
//     The instance is opts.Instance, else SETT_INSTANCE, else sett.yml's
//     instance, else the record's.
//  4. The running instance's record: its Redis, as the instance's
//     people's ACL user when the runtime created ACL users (what `sett
//     approve` and `sett forage` use).
//
// The running instance is opts.Instance (else SETT_INSTANCE) of the
// workspace, or the workspace's only one; instance records live in
// $XDG_STATE_HOME/sett (default ~/.local/state/sett).
//
// Errors: ErrInvalid for a bad setting, naming the variable or the file
// (a malformed SETT_REDIS_URL, SETT_INSTANCE or SETT_HASH_TAG, an
// unusable TLS file, an external Redis without an instance name); an
// error saying that no instance was found, and where DialEnv looked; one
// naming a sett.yml that cannot be read when nothing else reaches an
// instance; one naming the Redis and what to check when it does not
// answer.
func DialEnv(ctx context.Context, opts EnvOptions) (*Client, error) {
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("blackboard: dial from the working directory: %w", err)
		}
		dir = wd
	}
	t, err := connect.Resolve(connect.Request{Dir: dir, Instance: opts.Instance, LookupEnv: os.LookupEnv,
		NameHint: "set EnvOptions.Instance",
		ExplainNoInstance: func(err error) error {
			return fmt.Errorf("%w (DialEnv looked from %s: set SETT_REDIS_URL and SETT_INSTANCE, or EnvOptions.Dir to the instance's workspace)", err, dir)
		}})
	var noName *connect.NoNameError
	if errors.Is(err, config.ErrEnv) || errors.Is(err, redisconn.ErrTLS) || errors.As(err, &noName) {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err != nil {
		return nil, err
	}
	bb, err := t.Dial(ctx, Options{OpTimeout: opts.OpTimeout})
	if err != nil {
		return nil, err
	}
	c := newClient(bb)
	c.workspace = t.Workspace
	return c, nil
}

// Close releases the connection.
func (c *Client) Close() error { return c.bb.Close() }

// Instance returns the instance name the client works on.
func (c *Client) Instance() string { return c.bb.Instance() }

// Ping checks that Redis answers.
func (c *Client) Ping(ctx context.Context) error { return c.bb.Ping(ctx) }
