package docker

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/mount"

	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/worker"
)

const controllerYAML = `version: "1.0"
vault: {path: notes}
agents:
  planner:
    image: sett-cub:local
    command: ["sett-writer", "--type", "Plan"]
    mode: controller
    stop_grace: 10s
    workspace: {mode: rw}
    resources: {cpus: 0.5, memory: 64MiB}
    worker:
      image: sett-example-writer:local
      max_concurrent: 2
  reviewer:
    image: sett-example-reviewer:local
    bidding_strategy: review
`

func controllerPlan(t *testing.T, yaml string, sock dockerSocket) (*stackPlan, error) {
	t.Helper()
	return newStackPlan(runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml", Config: parseConfig(t, yaml)},
		planInput{User: "1000:1000", RedisPassword: "s3cret", DockerSocket: sock})
}

func TestStackPlanController(t *testing.T) {
	p, err := controllerPlan(t, controllerYAML, dockerSocket{Path: "/run/user/docker.sock", Group: "998"})
	if err != nil {
		t.Fatal(err)
	}
	socketMounts := func(c containerSpec) []mount.Mount {
		var out []mount.Mount
		for _, m := range c.Mounts {
			if m.Target == containerDockerSocket || strings.Contains(m.Source, "docker.sock") {
				out = append(out, m)
			}
		}
		return out
	}
	var planner containerSpec
	for _, c := range p.containers() {
		got := socketMounts(c)
		if c.Agent == "planner" {
			planner = c
			want := []mount.Mount{{Type: mount.TypeBind, Source: "/run/user/docker.sock", Target: containerDockerSocket, ReadOnly: true}}
			if !slices.Equal(got, want) || !slices.Equal(c.GroupAdd, []string{"998"}) {
				t.Errorf("controller: socket mounts %+v groups %q, want %+v and [998]", got, c.GroupAdd, want)
			}
			continue
		}
		if len(got) > 0 || len(c.GroupAdd) > 0 {
			t.Errorf("%s (%s) gets the Docker socket: %+v, groups %q", c.Name, c.Component, got, c.GroupAdd)
		}
	}
	if _, ok := p.CmdFromImage["planner"]; ok {
		t.Error("the controller's command comes from its image; it must be the launcher")
	}
	if got := p.Images["sett-example-writer:local"]; !slices.Equal(got, []string{"agents.planner.worker.image"}) {
		t.Errorf("worker image not checked by Up: %v", p.Images)
	}
	if len(planner.Cmd) == 0 || planner.Cmd[0] != launcherPath {
		t.Fatalf("controller command %q, want %s ...", planner.Cmd, launcherPath)
	}
	ws, err := worker.ParseArgs(planner.Cmd[1:], io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := worker.Spec{
		Image: "sett-example-writer:local", Command: []string{"sett-writer", "--type", "Plan"},
		User: "1000:1000", Network: "sett-demo", Workspace: "/ws", WorkspaceTarget: "/workspace",
		Masks:    []string{"/workspace/.sett", "/workspace/notes"},
		NanoCPUs: 500_000_000, Memory: 64 << 20, PidsLimit: planner.PidsLimit, ReadOnlyRoot: true,
		Labels:     map[string]string{LabelInstance: "demo", LabelWorkspace: "/ws", LabelComponent: ComponentWorker, LabelAgent: "planner"},
		NamePrefix: "sett-demo-agent-planner-worker", StopTimeout: 8 * time.Second, DockerHost: "unix:///var/run/docker.sock",
		MaxOutput: 4 << 20,
	}
	if planner.PidsLimit == 0 || !planner.ReadOnlyRoot {
		t.Errorf("the controller itself lost its hardening: pids %d read-only %v", planner.PidsLimit, planner.ReadOnlyRoot)
	}
	if got := ws.Args(); !slices.Equal(got, want.Args()) {
		t.Errorf("worker spec:\n got %q\nwant %q", got, want.Args())
	}
	sweep, err := worker.ParseSweepArgs(planner.Entrypoint[2:], io.Discard)
	if err != nil || planner.Entrypoint[0] != launcherPath || planner.Entrypoint[1] != worker.SweepCommand {
		t.Fatalf("controller entrypoint %q (%v), want %s sweep ...", planner.Entrypoint, err, launcherPath)
	}
	if !slices.Equal(sweep.Exec, []string{cubPath}) || sweep.DockerHost != want.DockerHost || len(sweep.Labels) != len(want.Labels) {
		t.Errorf("sweep %+v: want the worker labels, then exec %s", sweep, cubPath)
	}
	for k, v := range want.Labels {
		if sweep.Labels[k] != v {
			t.Errorf("sweep label %s = %q, want %q", k, sweep.Labels[k], v)
		}
	}
	if opts := planner.createOptions("net"); !slices.Equal(opts.HostConfig.GroupAdd, []string{"998"}) || !slices.Equal(opts.Config.Entrypoint, planner.Entrypoint) {
		t.Errorf("create options drop the socket group: %q", opts.HostConfig.GroupAdd)
	}
}

func TestStackPlanControllerNeedsASocket(t *testing.T) {
	_, err := controllerPlan(t, controllerYAML, dockerSocket{})
	if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "agents.planner runs in mode: controller") {
		t.Errorf("err = %v, want ErrInvalidSpec naming agents.planner", err)
	}
}

func TestHostDockerSocket(t *testing.T) {
	if _, err := hostDockerSocket("tcp://10.0.0.1:2376", []string{"planner"}); !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "local Unix socket") {
		t.Errorf("tcp daemon: %v, want ErrInvalidSpec about a local Unix socket", err)
	}
	if _, err := hostDockerSocket("unix:///nonexistent/docker.sock", []string{"planner"}); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("missing socket: %v, want ErrInvalidSpec", err)
	}
}

func TestWorkersAreNotComponents(t *testing.T) {
	if got := componentName(map[string]string{LabelComponent: ComponentWorker, LabelAgent: "planner"}); got != "" {
		t.Errorf("componentName(worker) = %q, want \"\" (List skips workers)", got)
	}
}
