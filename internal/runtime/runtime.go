package runtime

import (
	"context"
	"io"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
)

// Progress reports one step of `sett up` for the progress display.
type Progress struct {
	// Component is "redis", "orchestrator", "network", an agent name, ...
	Component string
	// State is "creating", "starting", "waiting", "ready" or "failed".
	State  string
	Detail string
}

// UpSpec is what `sett up` asks of a runtime.
type UpSpec struct {
	Name       string
	Workspace  string
	ConfigPath string
	Config     *config.Config
	// Force starts even when another instance already runs on this
	// workspace.
	Force bool
	// ProgressFunc receives progress; may be nil.
	ProgressFunc func(Progress)
	// WarnFunc receives each isolation or limit the runtime cannot
	// enforce on this host (said once per Up); may be nil.
	WarnFunc func(string)
}

// Listing is one instance as `sett list` shows it.
type Listing struct {
	Name       string            `json:"name"`
	Runtime    string            `json:"runtime"`
	Workspace  string            `json:"workspace"`
	Status     string            `json:"status"`     // running | degraded | stopped
	Components map[string]string `json:"components"` // component → state
}

// Runtime starts and stops instances.
type Runtime interface {
	// Name is "docker" or "local".
	Name() string
	// Up starts every component, waits until each is ready and returns the
	// record to save. On failure it removes what it created and says why.
	Up(ctx context.Context, spec UpSpec) (*instance.Record, error)
	// Down stops and removes the instance's components. Data (the Redis
	// volume or data directory) is kept unless purge.
	Down(ctx context.Context, rec *instance.Record, purge bool) error
	// List returns the instances this runtime knows of.
	List(ctx context.Context) ([]Listing, error)
	// Logs writes a component's logs ("orchestrator", "redis" or an agent
	// name) to w, following them when follow is set, until ctx ends.
	Logs(ctx context.Context, rec *instance.Record, component string, follow bool, w io.Writer) error
}
