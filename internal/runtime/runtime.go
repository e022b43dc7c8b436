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
//
// A stack that Docker Compose started from the repository's
// docker-compose.yml is listed by the Docker runtime like its own
// instances, with Runtime "docker" (the Engine runs its containers, and
// `sett list -o json` consumers that select by runtime keep finding it)
// and ManagedBy "compose", which says how to manage it: `docker-compose`
// in ComposeDir, not `sett down` (which refuses). The table shows its
// runtime as "docker (compose)". The compose fields are omitted from the
// JSON of every other instance, so the JSON only gained fields.
type Listing struct {
	Name       string            `json:"name"`
	Runtime    string            `json:"runtime"`
	Workspace  string            `json:"workspace"`
	Status     string            `json:"status"`     // running | degraded | stopped
	Components map[string]string `json:"components"` // component → state
	// ManagedBy is ManagedByCompose for a compose stack, "" for an
	// instance `sett up` started.
	ManagedBy string `json:"managed_by,omitempty"`
	// ComposeProject is the compose stack's project name
	// (COMPOSE_PROJECT_NAME); "" for other instances.
	ComposeProject string `json:"compose_project,omitempty"`
	// ComposeDir is the compose stack's directory, where `docker-compose
	// down` stops it; "" for other instances, and for a stack of which
	// only the volume is left (Compose labels volumes with no directory).
	ComposeDir string `json:"compose_dir,omitempty"`
}

// ManagedByCompose is Listing.ManagedBy of a stack Docker Compose
// manages.
const ManagedByCompose = "compose"

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
