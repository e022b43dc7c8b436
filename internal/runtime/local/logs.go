package local

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/settdev/sett/internal/instance"
)

// Logs writes the log file of a component — "redis", "orchestrator", an
// agent name, or "supervisor" for the supervisor's own log — to w. With
// follow it keeps writing lines as they are appended until ctx ends, which
// is not an error. The logs stay after Down (without purge), so Logs works
// on a stopped instance. It returns ErrUnknownComponent for a component
// the instance does not have.
func (r *Runtime) Logs(ctx context.Context, rec *instance.Record, component string, follow bool, w io.Writer) error {
	sd, err := checkStateDir(rec)
	if err != nil {
		return err
	}
	path := sd.supervisorLog()
	if component != ComponentSupervisor {
		c, ok := rec.Components[component]
		if !ok {
			names := []string{ComponentSupervisor}
			for name := range rec.Components {
				names = append(names, name)
			}
			sort.Strings(names)
			if component == ComponentRedis {
				return fmt.Errorf("%w: instance %s uses an external Redis (services.redis url, sentinel or cluster); sett keeps no log of it: read the Redis servers' own logs", ErrUnknownComponent, rec.Name)
			}
			return fmt.Errorf("%w: instance %s has no component %q (it has: %s)", ErrUnknownComponent, rec.Name, component, strings.Join(names, ", "))
		}
		path = c.LogPath
		if path == "" {
			path = sd.logPath(component)
		}
	}
	return copyLog(ctx, path, w, follow)
}
