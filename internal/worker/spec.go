package worker

import (
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
)

// LabelLauncher identifies the launcher of a worker container
// ("host/pid/start"), so that a later launcher can tell whether it is
// still running (see Launcher.RemoveLeftovers).
const LabelLauncher = "dev.sett.worker.launcher"

// DefaultDockerHost is the Docker socket the launcher dials when Spec
// names none: where the Docker runtime mounts the socket into controller
// containers.
const DefaultDockerHost = "unix:///var/run/docker.sock"

// DefaultWorkspaceTarget is where a worker sees the workspace, as agent
// containers do.
const DefaultWorkspaceTarget = "/workspace"

// tmpfsTmp is the writable /tmp of a worker with a read-only root (the
// tools' HOME), the same as in agent containers.
const tmpfsTmp = "rw,nosuid,nodev,size=256m,mode=1777"

// maskSize bounds each read-only tmpfs that hides a path of the workspace.
const maskSize = 64 << 10

// Spec is one worker container as the launcher creates it. The runtime
// that starts the controller renders it with Args into the controller's
// tool command line; the launcher reads it back with ParseArgs. The zero
// value is not usable: Image and Command are required.
type Spec struct {
	// Image is the worker image; Command replaces its entrypoint and CMD.
	Image   string
	Command []string
	// User runs the worker ("uid:gid"); empty keeps the image's user.
	User string
	// Network is the Docker network the worker joins; empty: Docker's
	// default bridge.
	Network string
	// Workspace is the workspace's path on the Docker host (not inside
	// the controller) and WorkspaceTarget where the worker sees it;
	// empty Workspace mounts nothing.
	Workspace         string
	WorkspaceTarget   string
	WorkspaceReadOnly bool
	// Masks are paths (inside the worker) hidden behind an empty
	// read-only tmpfs, such as the workspace's .sett with the instance
	// records.
	Masks []string
	// NanoCPUs and Memory are the resource limits; zero means none.
	NanoCPUs int64
	Memory   int64
	// PidsLimit caps the worker's processes; zero means none.
	PidsLimit int64
	// ReadOnlyRoot makes the root filesystem read-only, with a tmpfs /tmp.
	ReadOnlyRoot bool
	// Labels go on the worker container; the launcher adds LabelLauncher.
	// The same labels (without LabelLauncher) select the workers that
	// RemoveLeftovers looks at.
	Labels map[string]string
	// NamePrefix starts the container name (a random suffix follows);
	// empty lets Docker name it.
	NamePrefix string
	// StopTimeout is how long a stopped worker gets between Docker's
	// SIGTERM and SIGKILL. Keep it below the agent's stop_grace, or the
	// cub kills the launcher before it removed the worker (the next
	// launcher then does).
	StopTimeout time.Duration
	// DockerHost is the daemon's address; empty means DefaultDockerHost.
	DockerHost string
	// MaxOutput is the cub's cap on the tool's stdout (the agent's
	// max_output_bytes); zero means none. A worker that writes more is
	// removed by the launcher before the launcher passes the excess byte
	// on: the cub kills a tool over its cap at once, and the worker must
	// not outlive that.
	MaxOutput int64
}

// Args renders s as the launcher's command line (without the program
// name): flags, "--", then the command. ParseArgs(s.Args()) returns s.
func (s Spec) Args() []string {
	var a []string
	add := func(name, value string) { a = append(a, "--"+name+"="+value) }
	add("image", s.Image)
	if s.User != "" {
		add("user", s.User)
	}
	if s.Network != "" {
		add("network", s.Network)
	}
	if s.Workspace != "" {
		add("workspace", s.Workspace)
	}
	if s.WorkspaceTarget != "" {
		add("workspace-target", s.WorkspaceTarget)
	}
	if s.WorkspaceReadOnly {
		add("workspace-ro", "true")
	}
	for _, m := range s.Masks {
		add("mask", m)
	}
	if s.NanoCPUs > 0 {
		add("cpus", strconv.FormatFloat(float64(s.NanoCPUs)/1e9, 'f', -1, 64))
	}
	if s.Memory > 0 {
		add("memory", strconv.FormatInt(s.Memory, 10))
	}
	if s.PidsLimit > 0 {
		add("pids-limit", strconv.FormatInt(s.PidsLimit, 10))
	}
	if s.ReadOnlyRoot {
		add("read-only-root", "true")
	}
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("label", k+"="+s.Labels[k])
	}
	if s.NamePrefix != "" {
		add("name-prefix", s.NamePrefix)
	}
	if s.StopTimeout > 0 {
		add("stop-timeout", s.StopTimeout.String())
	}
	if s.DockerHost != "" {
		add("docker-host", s.DockerHost)
	}
	if s.MaxOutput > 0 {
		add("max-output", strconv.FormatInt(s.MaxOutput, 10))
	}
	return append(append(a, "--"), s.Command...)
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// ParseArgs reads a Spec from the launcher's command line. Errors wrap
// ErrUsage and say which flag is wrong.
func ParseArgs(args []string, usage io.Writer) (Spec, error) {
	var s Spec
	var cpus float64
	var labels, masks listFlag
	fs := flag.NewFlagSet("sett-worker", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&s.Image, "image", "", "the worker image (required)")
	fs.StringVar(&s.User, "user", "", "uid:gid the worker runs as")
	fs.StringVar(&s.Network, "network", "", "Docker network the worker joins")
	fs.StringVar(&s.Workspace, "workspace", "", "the workspace's path on the Docker host")
	fs.StringVar(&s.WorkspaceTarget, "workspace-target", DefaultWorkspaceTarget, "where the worker sees the workspace")
	fs.BoolVar(&s.WorkspaceReadOnly, "workspace-ro", false, "mount the workspace read-only")
	fs.Var(&masks, "mask", "a path hidden behind an empty read-only tmpfs (repeatable)")
	fs.Float64Var(&cpus, "cpus", 0, "CPU limit (0: none)")
	fs.Int64Var(&s.Memory, "memory", 0, "memory limit in bytes (0: none)")
	fs.Int64Var(&s.PidsLimit, "pids-limit", 0, "process limit (0: none)")
	fs.BoolVar(&s.ReadOnlyRoot, "read-only-root", false, "read-only root filesystem with a tmpfs /tmp")
	fs.Var(&labels, "label", "key=value label of the worker (repeatable)")
	fs.StringVar(&s.NamePrefix, "name-prefix", "", "start of the container name")
	fs.DurationVar(&s.StopTimeout, "stop-timeout", 0, "time between SIGTERM and SIGKILL when the worker is stopped")
	fs.StringVar(&s.DockerHost, "docker-host", DefaultDockerHost, "the Docker daemon")
	fs.Int64Var(&s.MaxOutput, "max-output", 0, "the cub's cap on stdout in bytes (0: none)")
	if err := fs.Parse(args); err != nil {
		return Spec{}, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	s.Command = fs.Args()
	s.Masks = masks
	switch {
	case s.Image == "":
		return Spec{}, fmt.Errorf("%w: --image is required (the worker image)", ErrUsage)
	case len(s.Command) == 0 || s.Command[0] == "":
		return Spec{}, fmt.Errorf("%w: no command after the flags (write `sett-worker --image IMAGE [flags] -- COMMAND ARGS...`)", ErrUsage)
	case math.IsNaN(cpus) || cpus < 0:
		return Spec{}, fmt.Errorf("%w: --cpus %v is not a number of CPUs", ErrUsage, cpus)
	case s.Memory < 0 || s.PidsLimit < 0 || s.StopTimeout < 0 || s.MaxOutput < 0:
		return Spec{}, fmt.Errorf("%w: --memory, --pids-limit, --stop-timeout and --max-output must not be negative", ErrUsage)
	}
	s.NanoCPUs = int64(math.Round(cpus * 1e9))
	if len(labels) > 0 {
		var err error
		if s.Labels, err = parseLabels(labels); err != nil {
			return Spec{}, err
		}
	}
	return s, nil
}

// parseLabels turns --label key=value flags into a map; the launcher and
// the sweep read them the same way.
func parseLabels(labels []string) (map[string]string, error) {
	out := make(map[string]string, len(labels))
	for _, kv := range labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: --label %q is not key=value", ErrUsage, kv)
		}
		out[k] = v
	}
	return out, nil
}

// createOptions is the ContainerCreate request for one worker named name
// (empty: Docker picks), with environment env and the launcher label
// launcher.
func (s Spec) createOptions(name string, env []string, launcher string) client.ContainerCreateOptions {
	labels := make(map[string]string, len(s.Labels)+1)
	for k, v := range s.Labels {
		labels[k] = v
	}
	labels[LabelLauncher] = launcher
	target := s.WorkspaceTarget
	if target == "" {
		target = DefaultWorkspaceTarget
	}
	cfg := &container.Config{
		Image: s.Image,
		// The command replaces the entrypoint too: agent images start
		// the cub as their entrypoint, and a worker runs the tool alone.
		Entrypoint: s.Command[:1],
		Cmd:        s.Command[1:],
		Env:        env,
		User:       s.User,
		Labels:     labels,
		// stdin carries the tool input once, then closes (the tool
		// reads to EOF); no TTY, so stdout and stderr stay apart.
		OpenStdin:    true,
		StdinOnce:    true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
	}
	host := &container.HostConfig{
		SecurityOpt:    []string{"no-new-privileges:true"},
		CapDrop:        []string{"ALL"},
		ReadonlyRootfs: s.ReadOnlyRoot,
		Resources:      container.Resources{NanoCPUs: s.NanoCPUs, Memory: s.Memory},
		// The launcher removes the worker itself, after it has read the
		// exit code; AutoRemove would race with ContainerWait.
		AutoRemove: false,
	}
	if s.Network != "" {
		host.NetworkMode = container.NetworkMode(s.Network)
	}
	if s.PidsLimit > 0 {
		limit := s.PidsLimit
		host.Resources.PidsLimit = &limit
	}
	if s.ReadOnlyRoot {
		host.Tmpfs = map[string]string{"/tmp": tmpfsTmp}
	}
	if s.Workspace != "" {
		cfg.WorkingDir = target
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: s.Workspace, Target: target,
			ReadOnly: s.WorkspaceReadOnly})
	}
	for _, m := range s.Masks {
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeTmpfs, Target: m, ReadOnly: true,
			TmpfsOptions: &mount.TmpfsOptions{SizeBytes: maskSize}})
	}
	return client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: host}
}

// StopTimeoutFor is the Spec.StopTimeout for an agent's stop_grace: the
// grace less two seconds, which the launcher keeps to remove its worker
// after stopping it before the cub's SIGKILL; 0 for a grace of 2s or less.
func StopTimeoutFor(stopGrace time.Duration) time.Duration {
	const removal = 2 * time.Second
	if stopGrace <= removal {
		return 0
	}
	return stopGrace - removal
}
