package local

import (
	"context"
	"sync"

	"github.com/settdev/sett/internal/httpprobe"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// Instance and component states that List reports.
const (
	StatusRunning  = "running"  // the supervisor runs and every component is healthy
	StatusDegraded = "degraded" // something runs, but not everything
	StatusStopped  = "stopped"  // nothing runs

	ComponentHealthy    = "healthy"    // answers /healthz (Redis: PING)
	ComponentUnhealthy  = "unhealthy"  // runs under the supervisor but does not answer
	ComponentRestarting = "restarting" // exited; the supervisor restarts it after a backoff
	ComponentStopped    = "stopped"    // does not answer and no supervisor runs
)

// List returns every local instance in the user-level index
// (instance.All), those `sett down` stopped included, each with its status: running when the supervisor is
// alive and every component is healthy, stopped when neither the
// supervisor nor any component answers, degraded otherwise (a component
// is down or restarting, or components outlived their supervisor). The
// components are probed concurrently, each bounded by a second.
func (r *Runtime) List(ctx context.Context) ([]runtime.Listing, error) {
	recs, err := instance.All()
	if err != nil {
		return nil, err
	}
	out := []runtime.Listing{}
	for _, rec := range recs {
		if rec.Runtime == instance.RuntimeLocal {
			out = append(out, inspect(ctx, rec))
		}
	}
	return out, nil
}

// inspect probes one instance.
func inspect(ctx context.Context, rec *instance.Record) runtime.Listing {
	l := runtime.Listing{Name: rec.Name, Runtime: instance.RuntimeLocal, Workspace: rec.Workspace,
		Components: map[string]string{}}
	if rec.Stopped() {
		// `sett down` stopped it and kept its data: nothing to probe (its
		// old ports may serve something else by now).
		for name := range rec.Components {
			l.Components[name] = ComponentStopped
		}
		l.Status = StatusStopped
		return l
	}
	sd := recordStateDir(rec)
	pid := rec.SupervisorPID
	st, _ := ReadStatus(sd.statusFile())
	if st != nil && st.SupervisorPID != 0 {
		pid = st.SupervisorPID
	}
	supervised := supervisorRunning(pid, sd)

	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, c := range rec.Components {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if name == ComponentRedis {
				err = probeRedis(ctx, rec.RedisURL, rec.Name)
			} else {
				err = httpprobe.Get(ctx, c.HTTPAddr, "/healthz", probeTimeout)
			}
			state := ComponentHealthy
			switch {
			case err == nil:
			case !supervised:
				state = ComponentStopped
			case st != nil && st.Components[name].State == ChildBackoff:
				state = ComponentRestarting
			default:
				state = ComponentUnhealthy
			}
			mu.Lock()
			l.Components[name] = state
			mu.Unlock()
		}()
	}
	wg.Wait()

	healthy := 0
	for _, s := range l.Components {
		if s == ComponentHealthy {
			healthy++
		}
	}
	switch {
	case supervised && healthy == len(l.Components):
		l.Status = StatusRunning
	case !supervised && healthy == 0:
		l.Status = StatusStopped
	default:
		l.Status = StatusDegraded
	}
	return l
}
