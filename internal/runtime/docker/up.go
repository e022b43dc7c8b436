package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/acl"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// Up starts the instance described by spec and waits until every component
// is ready; see the package documentation for what it creates and in which
// order. spec.Workspace and spec.ConfigPath must be absolute.
//
// Errors wrap ErrDockerUnavailable, ErrInvalidSpec, ErrMissingImage,
// ErrAlreadyRunning (nothing was created for any of these) or ErrNotReady
// (what was created is removed again), or are ctx's error.
func (r *Runtime) Up(ctx context.Context, spec runtime.UpSpec) (*instance.Record, error) {
	// Agents start concurrently; ProgressFunc is called from one goroutine
	// at a time.
	var pmu sync.Mutex
	progress := func(p runtime.Progress) {
		if spec.ProgressFunc != nil {
			pmu.Lock()
			defer pmu.Unlock()
			spec.ProgressFunc(p)
		}
	}
	cli, err := r.client(ctx)
	if err != nil {
		return nil, err
	}
	user := r.opts.User
	if user == "" && spec.Config != nil {
		user = spec.Config.Services.Containers.User
	}
	explicit := user != ""
	if user == "" {
		user = invokingUser()
	}
	if err := checkWorkspaceAccess(spec, user); err != nil {
		return nil, err
	}
	orchUser, err := r.vaultOwnership(spec, user, explicit)
	if err != nil {
		return nil, err
	}
	internalRedis := spec.Config != nil && !spec.Config.Services.Redis.External()
	var pw password
	if internalRedis {
		if pw, err = loadPassword(spec); err != nil {
			return nil, err
		}
	}
	in := planInput{OrchestratorImage: r.opts.OrchestratorImage, User: user, OrchestratorUser: orchUser, RedisPassword: pw.value, LookupEnvFunc: os.LookupEnv}
	if spec.Config != nil {
		if ctl := spec.Config.ControllerAgents(); len(ctl) > 0 {
			if in.DockerSocket, err = hostDockerSocket(cli.DaemonHost(), ctl); err != nil {
				return nil, err
			}
		}
	}
	plan, err := newStackPlan(spec, in)
	if err != nil {
		return nil, err
	}
	if err := checkConflicts(ctx, cli, plan, spec.Force); err != nil {
		return nil, err
	}
	warnUnenforcedLimits(ctx, cli, plan, spec.WarnFunc)
	if err := r.ensureImages(ctx, cli, plan, progress); err != nil {
		return nil, err
	}

	// From here on Up changes things: undo them on any failure.
	rb := &rollback{cli: cli}
	rec, err := r.create(ctx, cli, plan, pw, rb, progress)
	if err != nil {
		if rerr := rb.run(ctx); rerr != nil {
			err = fmt.Errorf("%w\n(and removing what was created failed: %v: remove the containers labelled %s=%s by hand)",
				err, rerr, LabelInstance, plan.Instance)
		}
		return nil, err
	}
	rec.HashTag = spec.Config.Services.Redis.HashTag
	return rec, nil
}

// create does Up's work after the checks, recording in rb what it
// creates.
func (r *Runtime) create(ctx context.Context, cli *client.Client, p *stackPlan, pw password, rb *rollback, progress func(runtime.Progress)) (*instance.Record, error) {
	rec := &instance.Record{Name: p.Instance, Runtime: instance.RuntimeDocker, Workspace: p.Workspace,
		RedisURL: p.RedisURL, CreatedAt: r.now(), Components: map[string]instance.Component{}}

	// The agents' tmpfs over /workspace/.sett needs the directory as its
	// mount point; the CLI keeps its records there anyway.
	if err := os.MkdirAll(filepath.Join(p.Workspace, ".sett"), 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	if pw.generated {
		dir := stateDir(p.Workspace, p.Instance)
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			rb.stateDir = dir
		}
		if err := pw.save(dir); err != nil {
			return nil, err
		}
	}
	progress(runtime.Progress{Component: "network", State: "creating", Detail: p.Network})
	if err := ensureNetwork(ctx, cli, p, rb); err != nil {
		progress(runtime.Progress{Component: "network", State: "failed", Detail: err.Error()})
		return nil, err
	}
	progress(runtime.Progress{Component: "network", State: "ready", Detail: p.Network})

	ctx, cancel := context.WithTimeout(ctx, r.readyTimeout())
	defer cancel()

	if p.Redis != nil {
		if err := ensureVolume(ctx, cli, p, rb); err != nil {
			return nil, err
		}
		hostPort, err := r.startAndWait(ctx, cli, p, *p.Redis, rb, progress, func(id, port string) readyCheck {
			return redisReady(hostRedisURL(p.RedisPassword, port), p.Instance)
		})
		if err != nil {
			return nil, err
		}
		rec.RedisURL = hostRedisURL(p.RedisPassword, hostPort)
		if h, ok := p.People[acl.RoleHuman]; ok {
			rec.HumanRedisURL = instance.WithUser(rec.RedisURL, h[0], h[1])
		}
		if r, ok := p.People[acl.RoleReader]; ok {
			rec.ReaderRedisURL = instance.WithUser(rec.RedisURL, r[0], r[1])
		}
		rec.Components[ComponentRedis] = instance.Component{Container: p.Redis.Name}
	}

	// The agents first, the orchestrator once they are ready: its first
	// look at agent liveness then sees every agent.
	actx, acancel := context.WithCancel(ctx)
	defer acancel()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, s := range p.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			port, err := r.startAndWait(actx, cli, p, s, rb, progress, httpCheck)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				// The first failure stops the others' waiting; their
				// cancellation is not news.
				if actx.Err() == nil || ctx.Err() != nil {
					errs = append(errs, err)
				}
				acancel()
				return
			}
			rec.Components[s.Agent] = instance.Component{Container: s.Name, HTTPAddr: "127.0.0.1:" + port}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	port, err := r.startAndWait(ctx, cli, p, p.Orchestrator, rb, progress, httpCheck)
	if err != nil {
		return nil, err
	}
	rec.Components[ComponentOrchestrator] = instance.Component{Container: p.Orchestrator.Name, HTTPAddr: "127.0.0.1:" + port}
	return rec, nil
}

// httpCheck checks a daemon's /readyz on its published port.
func httpCheck(_, port string) readyCheck { return httpReady("127.0.0.1:" + port) }

// startAndWait creates and starts one container, then waits until check
// (made once the published port is known) passes. It returns the host
// port of the published port.
func (r *Runtime) startAndWait(ctx context.Context, cli *client.Client, p *stackPlan, s containerSpec, rb *rollback,
	progress func(runtime.Progress), check func(id, port string) readyCheck) (string, error) {
	component := s.Component
	if s.Agent != "" {
		component = s.Agent
	}
	fail := func(err error) (string, error) {
		// Cancelled because another component failed (or Ctrl-C): that
		// one reports.
		if !errors.Is(ctx.Err(), context.Canceled) {
			progress(runtime.Progress{Component: component, State: "failed", Detail: firstLine(err.Error())})
		}
		return "", err
	}
	progress(runtime.Progress{Component: component, State: "creating", Detail: s.Image})
	var res client.ContainerCreateResult
	var exited <-chan int64
	var policy container.RestartPolicy
	for attempt := 1; ; attempt++ {
		// A fixed host port, unlike one the daemon picks, stays the same
		// when the container restarts, so the record stays right.
		if s.Port != "" {
			hp, err := freeLoopbackPort()
			if err != nil {
				return fail(fmt.Errorf("%w: %s: find a free port: %v", ErrNotReady, describe(s), err))
			}
			s.HostPort = hp
		}
		// No restarts until the component has been ready once: a component
		// that cannot start then stays exited, with its exit code, instead
		// of looping; the restart policy is switched on below.
		opts := s.createOptions(p.Network)
		policy = opts.HostConfig.RestartPolicy
		opts.HostConfig.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyDisabled}
		var err error
		if res, err = cli.ContainerCreate(ctx, opts); err != nil {
			return fail(fmt.Errorf("%w: %s: create container %s: %v", ErrNotReady, describe(s), s.Name, err))
		}
		rb.addContainer(res.ID)
		exited = watchExit(ctx, cli, res.ID)
		progress(runtime.Progress{Component: component, State: "starting", Detail: s.Name})
		_, err = cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{})
		if err == nil {
			break
		}
		// Someone took the port between the check and the start: try
		// another one.
		if attempt < 3 && isPortConflict(err) {
			if rerr := removeContainer(ctx, cli, res.ID); rerr == nil {
				continue
			}
		}
		return fail(fmt.Errorf("%w: %s: start container %s: %v", ErrNotReady, describe(s), s.Name, err))
	}
	port, err := publishedPort(ctx, cli, res.ID, s.Port)
	if err != nil {
		if why := crashed(ctx, cli, res.ID); why != "" {
			return fail(fmt.Errorf("%w: %s %s%s", ErrNotReady, describe(s), why, tail(ctx, cli, res.ID)))
		}
		return fail(fmt.Errorf("%w: %s: %v", ErrNotReady, describe(s), err))
	}
	progress(runtime.Progress{Component: component, State: "waiting", Detail: "127.0.0.1:" + port})
	if err := waitReady(ctx, cli, res.ID, describe(s), check(res.ID, port), exited); err != nil {
		return fail(err)
	}
	if _, err := cli.ContainerUpdate(ctx, res.ID, client.ContainerUpdateOptions{RestartPolicy: &policy}); err != nil {
		return fail(fmt.Errorf("%w: %s: set the restart policy of %s: %v", ErrNotReady, describe(s), s.Name, err))
	}
	progress(runtime.Progress{Component: component, State: "ready", Detail: "127.0.0.1:" + port})
	return port, nil
}

// freeLoopbackPort returns a port that is free on 127.0.0.1 now.
func freeLoopbackPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// isPortConflict reports whether starting a container failed because its
// host port is taken.
func isPortConflict(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "port is already allocated") || strings.Contains(msg, "address already in use")
}

// describe names a container's component in messages: "agent coder",
// "redis", "orchestrator".
func describe(s containerSpec) string {
	if s.Agent != "" {
		return "agent " + s.Agent
	}
	return s.Component
}

// publishedPort returns the host port the daemon chose for containerPort.
func publishedPort(ctx context.Context, cli *client.Client, id, containerPort string) (string, error) {
	res, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return "", fmt.Errorf("inspect container: %w", err)
	}
	if ns := res.Container.NetworkSettings; ns != nil {
		for _, b := range ns.Ports[network.MustParsePort(containerPort)] {
			if b.HostPort != "" && (!b.HostIP.IsValid() || b.HostIP.Is4()) {
				return b.HostPort, nil
			}
		}
	}
	return "", fmt.Errorf("port %s was not published", containerPort)
}

// checkConflicts refuses an instance whose containers exist already, and a
// second instance on the same workspace unless force.
func checkConflicts(ctx context.Context, cli *client.Client, p *stackPlan, force bool) error {
	mine, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: instanceFilter(p.Instance)})
	if err != nil {
		return fmt.Errorf("docker: list containers: %w", err)
	}
	if len(mine.Items) > 0 {
		var names []string
		for _, c := range mine.Items {
			if cp, ok := composeProjectOf(c.Labels); ok {
				// `sett down` would refuse: say what stops it.
				return fmt.Errorf("%w: instance %s runs as a Docker Compose stack (%s): choose another --name, or stop the stack with `docker-compose down` there",
					ErrAlreadyRunning, p.Instance, cp.where())
			}
			names = append(names, containerNameOf(c.Names))
		}
		sort.Strings(names)
		return fmt.Errorf("%w: instance %s already has containers (%s): run `sett down --name %s` first",
			ErrAlreadyRunning, p.Instance, strings.Join(names, ", "), p.Instance)
	}
	if force {
		return nil
	}
	same, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelWorkspace+"="+p.Workspace)})
	if err != nil {
		return fmt.Errorf("docker: list containers: %w", err)
	}
	for _, c := range same.Items {
		other := c.Labels[LabelInstance]
		if other == "" || other == p.Instance {
			continue
		}
		if cp, ok := composeProjectOf(c.Labels); ok {
			return fmt.Errorf("%w: workspace %s already runs instance %s as a Docker Compose stack (%s): stop it with `docker-compose down` there, or pass --force to run both",
				ErrAlreadyRunning, p.Workspace, other, cp.where())
		}
		return fmt.Errorf("%w: workspace %s already runs instance %s: stop it with `sett down --name %s`, or pass --force to run both",
			ErrAlreadyRunning, p.Workspace, other, other)
	}
	return nil
}

// containerNameOf returns a container's name without the API's leading
// slash.
func containerNameOf(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return strings.TrimPrefix(names[0], "/")
}

// ensureNetwork creates the instance network, or reuses one a failed Down
// left behind.
func ensureNetwork(ctx context.Context, cli *client.Client, p *stackPlan, rb *rollback) error {
	existing, err := cli.NetworkInspect(ctx, p.Network, client.NetworkInspectOptions{})
	switch {
	case err == nil:
		if existing.Network.Labels[LabelInstance] != p.Instance {
			return fmt.Errorf("%w: a network named %s exists and does not belong to instance %s: remove it (docker network rm %s) or choose another --name",
				ErrNotReady, p.Network, p.Instance, p.Network)
		}
		return nil
	case !cerrdefs.IsNotFound(err):
		return fmt.Errorf("docker: inspect network %s: %w", p.Network, err)
	}
	if _, err := cli.NetworkCreate(ctx, p.Network, client.NetworkCreateOptions{Driver: "bridge",
		Labels: baseLabels(p.Instance, p.Workspace)}); err != nil {
		return fmt.Errorf("%w: create network %s: %v", ErrNotReady, p.Network, err)
	}
	rb.network = p.Network
	return nil
}

// ensureVolume creates the Redis data volume unless it exists (Down keeps
// it: the instance's data).
func ensureVolume(ctx context.Context, cli *client.Client, p *stackPlan, rb *rollback) error {
	_, err := cli.VolumeInspect(ctx, p.Volume, client.VolumeInspectOptions{})
	switch {
	case err == nil:
		return nil
	case !cerrdefs.IsNotFound(err):
		return fmt.Errorf("docker: inspect volume %s: %w", p.Volume, err)
	}
	if _, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: p.Volume,
		Labels: baseLabels(p.Instance, p.Workspace)}); err != nil {
		return fmt.Errorf("%w: create volume %s: %v", ErrNotReady, p.Volume, err)
	}
	rb.volume = p.Volume
	return nil
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
