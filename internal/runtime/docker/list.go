package docker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/httpprobe"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// Component states that List reports (the local runtime's words).
const (
	ComponentHealthy    = "healthy"    // runs and answers: /healthz, or its image's healthcheck
	ComponentUnhealthy  = "unhealthy"  // runs but does not answer
	ComponentStarting   = "starting"   // its image's healthcheck has not decided yet
	ComponentRestarting = "restarting" // exited; Docker restarts it (restart policy)
	ComponentStopped    = "stopped"    // not running; "stopped (exit N)" when it exited
)

// probeBound bounds one /healthz probe of List.
const probeBound = time.Second

// List returns every instance that has containers or a data volume on
// the daemon, found by the dev.sett.instance label, sorted by name; a
// compose stack (the labels of docker-compose.yml) is one too, with
// Listing.ManagedBy "compose" and its project and directory. Each
// component (redis, orchestrator, the agents) maps to one of the
// Component* states: the daemons are probed on /healthz and Redis with
// PING through their published ports (concurrently, each bounded by a
// second); a container without a published port by its image's
// healthcheck, if any. The status is running when every
// component is healthy, stopped when no container runs (an instance whose
// only trace is its kept volume is stopped with no components), and
// degraded otherwise.
func (r *Runtime) List(ctx context.Context) ([]runtime.Listing, error) {
	cli, err := r.client(ctx)
	if err != nil {
		return nil, err
	}
	labelled := make(client.Filters).Add("label", LabelInstance)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: labelled})
	if err != nil {
		return nil, fmt.Errorf("docker: list containers: %w", err)
	}
	vols, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: labelled})
	if err != nil {
		return nil, fmt.Errorf("docker: list volumes: %w", err)
	}
	byKey := map[string]*runtime.Listing{}
	get := func(labels map[string]string) *runtime.Listing {
		id := listingOf(labels)
		key := listingKey(id)
		l, ok := byKey[key]
		if !ok {
			l = &id
			l.Components = map[string]string{}
			byKey[key] = l
		}
		if l.Workspace == "" {
			l.Workspace = id.Workspace
		}
		if l.ComposeDir == "" {
			l.ComposeDir = id.ComposeDir
		}
		return l
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	running := map[*runtime.Listing]int{}
	for _, c := range cs.Items {
		l := get(c.Labels)
		name := componentName(c.Labels)
		if name == "" {
			continue
		}
		if c.State == container.StateRunning {
			running[l]++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			state := componentState(ctx, c)
			mu.Lock()
			l.Components[name] = state
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, v := range vols.Items {
		get(v.Labels)
	}
	out := make([]runtime.Listing, 0, len(byKey))
	for _, l := range byKey {
		l.Status = listingStatus(l.Components, running[l])
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return listingKey(out[i]) < listingKey(out[j])
	})
	return out, nil
}

// listingOf is the listing (without status and components) that a
// container or volume belongs to, from its labels: its instance on the
// docker runtime and, when Docker Compose manages it (composeProjectOf),
// the compose project and directory.
func listingOf(labels map[string]string) runtime.Listing {
	l := runtime.Listing{Name: labels[LabelInstance], Runtime: instance.RuntimeDocker, Workspace: labels[LabelWorkspace]}
	if p, ok := composeProjectOf(labels); ok {
		l.ManagedBy = ManagedByCompose
		l.ComposeProject = p.Name
		l.ComposeDir = p.WorkingDir
		l.Workspace = composeWorkspace(labels)
	}
	return l
}

// listingKey tells listings apart: by instance name, and by compose
// project, so that a compose stack and an instance `sett up` started under
// the same name, or the stacks of two checkouts (both "compose" unless
// .env says otherwise), are rows of their own.
func listingKey(l runtime.Listing) string {
	return l.Name + "\x00" + l.ManagedBy + "\x00" + l.ComposeProject
}

// listingStatus summarises an instance from its components' states and
// the number of its running containers.
func listingStatus(components map[string]string, running int) string {
	healthy := 0
	for _, s := range components {
		if s == ComponentHealthy {
			healthy++
		}
	}
	switch {
	case running == 0:
		return StatusStopped
	case healthy == len(components):
		return StatusRunning
	}
	return StatusDegraded
}

// componentState is a container's state as List shows it.
func componentState(ctx context.Context, c container.Summary) string {
	switch c.State {
	case container.StateRestarting:
		return ComponentRestarting
	case container.StateRunning:
	default:
		if code, ok := exitCode(c.Status); ok {
			return fmt.Sprintf("%s (exit %d)", ComponentStopped, code)
		}
		return ComponentStopped
	}
	for _, p := range c.Ports {
		if p.PublicPort == 0 {
			continue
		}
		addr := fmt.Sprintf("127.0.0.1:%d", p.PublicPort)
		switch {
		case c.Labels[LabelComponent] == ComponentRedis && p.PrivatePort == 6379:
			return probeRedis(ctx, addr)
		case p.PrivatePort == 8080 || p.PrivatePort == 8081:
			if httpprobe.Get(ctx, addr, "/healthz", probeBound) == nil {
				return ComponentHealthy
			}
			return ComponentUnhealthy
		}
	}
	switch h := healthOf(c); h {
	case "", string(container.Healthy):
		return ComponentHealthy
	case string(container.Starting):
		return ComponentStarting
	}
	return ComponentUnhealthy
}

// probeRedis asks Redis for PING without the password (List has no
// record to read it from): a Redis that answers at all refuses with
// NOAUTH, which is as good as PONG for liveness; LOADING means it is still
// reading its append-only file.
func probeRedis(ctx context.Context, addr string) string {
	ctx, cancel := context.WithTimeout(ctx, probeBound)
	defer cancel()
	bb, err := blackboard.Dial(ctx, "redis://"+addr+"/0", blackboard.Options{Instance: "probe", OpTimeout: probeBound})
	switch {
	case err == nil:
		_ = bb.Close()
		return ComponentHealthy
	case strings.Contains(err.Error(), "NOAUTH"):
		return ComponentHealthy
	case strings.Contains(err.Error(), "LOADING"):
		return ComponentStarting
	}
	return ComponentUnhealthy
}

// exitCode reads the code from a status like "Exited (3) 5 seconds ago".
func exitCode(status string) (int, bool) {
	var code int
	if _, err := fmt.Sscanf(status, "Exited (%d)", &code); err != nil {
		return 0, false
	}
	return code, true
}

// healthOf returns the healthcheck status of a running container ("" when
// it has none), from the summary (newer daemons) or from its status text
// ("Up 3 minutes (healthy)", "Up 2 seconds (health: starting)").
func healthOf(c container.Summary) string {
	if c.Health != nil && c.Health.Status != "" && c.Health.Status != container.NoHealthcheck {
		return string(c.Health.Status)
	}
	for _, h := range []container.HealthStatus{container.Healthy, container.Unhealthy, container.Starting} {
		if strings.Contains(c.Status, "("+string(h)+")") || strings.Contains(c.Status, "(health: "+string(h)+")") {
			return string(h)
		}
	}
	return ""
}
