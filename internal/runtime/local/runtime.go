package local

import (
	"time"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// Defaults of the Runtime's tuning fields.
const (
	// DefaultReadyTimeout bounds Up's wait for every component to be
	// ready.
	DefaultReadyTimeout = 60 * time.Second
	// DefaultDownTimeout bounds Down's wait for the supervisor to stop
	// everything (each stage may take the supervisor's StopTimeout, 10s);
	// after it the supervisor and what is left of its components are
	// killed.
	DefaultDownTimeout = 45 * time.Second
)

// Component names the runtime uses besides the agents. An agent may not
// take one of these names.
const (
	ComponentRedis        = "redis"
	ComponentOrchestrator = "orchestrator"
	// ComponentSupervisor is accepted by Logs only: the supervisor is not
	// a component of the record.
	ComponentSupervisor = "supervisor"
)

// Stages of the plan (see PlanComponent.Stage).
const (
	stageRedis        = 0
	stageCubs         = 1
	stageOrchestrator = 2
)

// Runtime runs instances as processes on the host; see the package
// documentation. The zero value (New) is ready to use; set the fields
// before the first call. It holds no state of its own, so it is safe for
// concurrent use.
type Runtime struct {
	// Executable is the sett binary that Up starts as `sett supervise`;
	// sett-orchestrator and sett-cub are looked for in its directory
	// first. Empty: the running program (os.Executable). Tests set the
	// sett binary they built, since there the running program is the test
	// binary.
	Executable string
	// LookPathFunc finds redis-server, and the daemons when they are not
	// next to Executable. Nil: exec.LookPath.
	LookPathFunc func(file string) (string, error)
	// ReadyTimeout bounds Up's wait for readiness. Zero:
	// DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// DownTimeout bounds the wait for the supervisor to stop. Zero:
	// DefaultDownTimeout.
	DownTimeout time.Duration
	// NowFunc stamps records. Nil: time.Now.
	NowFunc func() time.Time
}

// New returns a Runtime with the defaults.
func New() *Runtime { return &Runtime{} }

// Name returns "local".
func (r *Runtime) Name() string { return instance.RuntimeLocal }

func (r *Runtime) readyTimeout() time.Duration {
	if r.ReadyTimeout > 0 {
		return r.ReadyTimeout
	}
	return DefaultReadyTimeout
}

func (r *Runtime) downTimeout() time.Duration {
	if r.DownTimeout > 0 {
		return r.DownTimeout
	}
	return DefaultDownTimeout
}

func (r *Runtime) now() time.Time {
	if r.NowFunc != nil {
		return r.NowFunc()
	}
	return time.Now()
}

var _ runtime.Runtime = (*Runtime)(nil)
