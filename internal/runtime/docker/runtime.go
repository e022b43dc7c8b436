package docker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// Defaults of the Options.
const (
	// DefaultReadyTimeout bounds Up's wait for every component to be
	// ready.
	DefaultReadyTimeout = 90 * time.Second
	// DefaultPullTimeout bounds pulling one missing image.
	DefaultPullTimeout = 5 * time.Minute
	// DefaultStopTimeout is how long Down lets a container stop after
	// SIGTERM before the daemon kills it.
	DefaultStopTimeout = 10 * time.Second
	// DefaultUser runs the orchestrator and agents when `sett up` runs as
	// root (the "nonroot" user of distroless images).
	DefaultUser = "65532:65532"
)

// Options configure a Runtime. The zero value uses the environment's
// Docker daemon and the defaults above.
type Options struct {
	// Host is the daemon address (unix:///var/run/docker.sock,
	// tcp://host:2376). Empty: DOCKER_HOST, else the platform default.
	Host string
	// OrchestratorImage runs the orchestrator. Empty:
	// DefaultOrchestratorImage.
	OrchestratorImage string
	// User runs the orchestrator and the agents ("uid:gid"). Empty:
	// services.containers.user, else the user running `sett up` when that
	// is not root, else DefaultUser.
	// Root ("0", "root") is refused: the daemons need no privileges.
	User string
	// ReadyTimeout bounds Up's wait for readiness. Zero:
	// DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// PullTimeout bounds pulling one missing image. Zero:
	// DefaultPullTimeout. Images tagged ":local" are never pulled.
	PullTimeout time.Duration
	// StopTimeout is Down's grace period per container. Zero:
	// DefaultStopTimeout.
	StopTimeout time.Duration
	// NowFunc stamps records. Nil: time.Now.
	NowFunc func() time.Time
}

// Runtime runs instances as containers; see the package documentation.
// It is safe for concurrent use. Its methods return the errors of
// errors.go, wrapped.
type Runtime struct {
	opts Options

	mu  sync.Mutex
	cli *client.Client
}

var _ runtime.Runtime = (*Runtime)(nil)

// New returns a Runtime. It does not contact the daemon (the first method
// that needs it does), so it succeeds on machines without Docker; it fails
// only when opts.Host is not a daemon address or opts.User is root.
func New(opts Options) (*Runtime, error) {
	if opts.Host != "" {
		if _, err := client.ParseHostURL(opts.Host); err != nil {
			return nil, fmt.Errorf("docker: host %q: %w", opts.Host, err)
		}
	}
	if isRoot(opts.User) {
		return nil, fmt.Errorf("docker: user %q is root: the orchestrator and agents run as a non-root user", opts.User)
	}
	return &Runtime{opts: opts}, nil
}

// Name returns "docker".
func (r *Runtime) Name() string { return instance.RuntimeDocker }

// Close releases the connection to the daemon, if one was made. The
// Runtime connects again when used after Close.
func (r *Runtime) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cli == nil {
		return nil
	}
	err := r.cli.Close()
	r.cli = nil
	return err
}

// client returns the daemon connection, creating it and pinging the daemon
// on first use. A failed ping is not remembered: the next call tries again.
func (r *Runtime) client(ctx context.Context) (*client.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cli != nil {
		return r.cli, nil
	}
	opts := []client.Opt{client.FromEnv}
	if r.opts.Host != "" {
		opts = append(opts, client.WithHost(r.opts.Host))
	}
	c, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDockerUnavailable, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("%w at %s: %v (is Docker running, and may this user use it? Without Docker, use `sett up --runtime local`)",
			ErrDockerUnavailable, c.DaemonHost(), err)
	}
	r.cli = c
	return c, nil
}

func (r *Runtime) readyTimeout() time.Duration {
	if r.opts.ReadyTimeout > 0 {
		return r.opts.ReadyTimeout
	}
	return DefaultReadyTimeout
}

func (r *Runtime) pullTimeout() time.Duration {
	if r.opts.PullTimeout > 0 {
		return r.opts.PullTimeout
	}
	return DefaultPullTimeout
}

func (r *Runtime) stopTimeout() time.Duration {
	if r.opts.StopTimeout > 0 {
		return r.opts.StopTimeout
	}
	return DefaultStopTimeout
}

func (r *Runtime) now() time.Time {
	if r.opts.NowFunc != nil {
		return r.opts.NowFunc()
	}
	return time.Now()
}

// isRoot reports whether a container user spec names root.
func isRoot(user string) bool {
	name, _, _ := strings.Cut(user, ":")
	return name == "0" || name == "root"
}
