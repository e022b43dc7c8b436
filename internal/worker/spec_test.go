package worker

import (
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/mount"
)

func fullSpec() Spec {
	return Spec{
		Image:             "sett-example-writer:local",
		Command:           []string{"sett-writer", "--type", "Plan"},
		User:              "1000:1000",
		Network:           "sett-demo",
		Workspace:         "/home/me/project",
		WorkspaceTarget:   "/workspace",
		WorkspaceReadOnly: true,
		Masks:             []string{"/workspace/.sett", "/workspace/vault"},
		NanoCPUs:          500_000_000,
		Memory:            64 << 20,
		PidsLimit:         256,
		ReadOnlyRoot:      true,
		Labels:            map[string]string{"dev.sett.instance": "demo", "dev.sett.agent": "planner", "dev.sett.component": "worker"},
		NamePrefix:        "sett-demo-planner-worker",
		StopTimeout:       5 * time.Second,
		DockerHost:        "unix:///var/run/docker.sock",
		MaxOutput:         4 << 20,
	}
}

func TestSpecArgsRoundTrip(t *testing.T) {
	for _, s := range []Spec{fullSpec(), {Image: "img", Command: []string{"tool"}, WorkspaceTarget: DefaultWorkspaceTarget, DockerHost: DefaultDockerHost}} {
		got, err := ParseArgs(s.Args(), io.Discard)
		if err != nil {
			t.Fatalf("ParseArgs(%q): %v", s.Args(), err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
		}
	}
}

func TestParseArgsRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no image", args: []string{"--", "tool"}, want: "--image is required"},
		{name: "no command", args: []string{"--image=x"}, want: "no command after the flags"},
		{name: "bad label", args: []string{"--image=x", "--label=novalue", "--", "tool"}, want: `--label "novalue" is not key=value`},
		{name: "negative cpus", args: []string{"--image=x", "--cpus=-1", "--", "tool"}, want: "--cpus -1 is not a number of CPUs"},
		{name: "unknown flag", args: []string{"--image=x", "--privileged", "--", "tool"}, want: "flag provided but not defined: -privileged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseArgs(tt.args, io.Discard)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseArgs(%q) = %v, want ErrUsage with %q", tt.args, err, tt.want)
			}
		})
	}
}

// TestCreateOptionsHardening checks that a worker container gets what an
// agent container gets: non-root user, no-new-privileges, no capabilities,
// read-only root with a tmpfs /tmp, pids, CPU and memory limits, the
// workspace in the agent's mode with .sett hidden, the labels, and never
// the Docker socket.
func TestCreateOptionsHardening(t *testing.T) {
	s := fullSpec()
	opts := s.createOptions("sett-demo-planner-worker-1", []string{"HOME=/tmp", "SETT_CLAIM_ID=c1"}, "host/42/7")
	cfg, host := opts.Config, opts.HostConfig
	if opts.Name != "sett-demo-planner-worker-1" || cfg.Image != s.Image || cfg.User != "1000:1000" {
		t.Errorf("name %q image %q user %q", opts.Name, cfg.Image, cfg.User)
	}
	if !slices.Equal(cfg.Entrypoint, []string{"sett-writer"}) || !slices.Equal(cfg.Cmd, []string{"--type", "Plan"}) {
		t.Errorf("entrypoint %q cmd %q, want the command alone", cfg.Entrypoint, cfg.Cmd)
	}
	if !cfg.OpenStdin || !cfg.StdinOnce || !cfg.AttachStdin || !cfg.AttachStdout || !cfg.AttachStderr || cfg.Tty {
		t.Errorf("stdio: open %v once %v attach %v/%v/%v tty %v", cfg.OpenStdin, cfg.StdinOnce, cfg.AttachStdin, cfg.AttachStdout, cfg.AttachStderr, cfg.Tty)
	}
	if !slices.Equal(cfg.Env, []string{"HOME=/tmp", "SETT_CLAIM_ID=c1"}) {
		t.Errorf("env %q", cfg.Env)
	}
	if cfg.WorkingDir != "/workspace" {
		t.Errorf("working dir %q", cfg.WorkingDir)
	}
	for k, v := range s.Labels {
		if cfg.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, cfg.Labels[k], v)
		}
	}
	if cfg.Labels[LabelLauncher] != "host/42/7" {
		t.Errorf("launcher label %q", cfg.Labels[LabelLauncher])
	}
	if !slices.Equal(host.SecurityOpt, []string{"no-new-privileges:true"}) || !slices.Equal(host.CapDrop, []string{"ALL"}) {
		t.Errorf("security opts %q cap drop %q", host.SecurityOpt, host.CapDrop)
	}
	if host.Privileged || len(host.CapAdd) > 0 || host.AutoRemove {
		t.Errorf("privileged %v cap add %q auto remove %v", host.Privileged, host.CapAdd, host.AutoRemove)
	}
	if !host.ReadonlyRootfs || host.Tmpfs["/tmp"] != tmpfsTmp {
		t.Errorf("read-only root %v tmpfs %v", host.ReadonlyRootfs, host.Tmpfs)
	}
	if host.PidsLimit == nil || *host.PidsLimit != 256 || host.NanoCPUs != 500_000_000 || host.Memory != 64<<20 {
		t.Errorf("limits: pids %v cpus %d memory %d", host.PidsLimit, host.NanoCPUs, host.Memory)
	}
	if string(host.NetworkMode) != "sett-demo" {
		t.Errorf("network %q", host.NetworkMode)
	}
	want := []mount.Mount{
		{Type: mount.TypeBind, Source: "/home/me/project", Target: "/workspace", ReadOnly: true},
		{Type: mount.TypeTmpfs, Target: "/workspace/.sett", ReadOnly: true, TmpfsOptions: &mount.TmpfsOptions{SizeBytes: maskSize}},
		{Type: mount.TypeTmpfs, Target: "/workspace/vault", ReadOnly: true, TmpfsOptions: &mount.TmpfsOptions{SizeBytes: maskSize}},
	}
	if !reflect.DeepEqual(host.Mounts, want) {
		t.Errorf("mounts:\n got %+v\nwant %+v", host.Mounts, want)
	}
	if len(host.Binds) > 0 || len(host.VolumesFrom) > 0 {
		t.Errorf("binds %q volumes-from %q: only Mounts are used", host.Binds, host.VolumesFrom)
	}

	s.WorkspaceReadOnly = false
	if rw := s.createOptions("", nil, "x").HostConfig.Mounts[0]; rw.ReadOnly {
		t.Errorf("workspace mode rw mounted read-only: %+v", rw)
	}
}

func TestWorkerEnvDropsPathAndDocker(t *testing.T) {
	got := WorkerEnv([]string{"PATH=/usr/bin", "HOME=/tmp", "DOCKER_HOST=unix:///x", "docker_cert_path=/y", "SETT_CLAIM_ID=c1", "TOKEN=t"})
	want := []string{"HOME=/tmp", "SETT_CLAIM_ID=c1", "TOKEN=t"}
	if !slices.Equal(got, want) {
		t.Errorf("WorkerEnv = %q, want %q", got, want)
	}
}

func TestLauncherAlive(t *testing.T) {
	self := Self()
	host, _, _ := strings.Cut(self, "/")
	tests := []struct {
		id   string
		want bool
	}{
		{id: self, want: true},
		{id: host + "/1/0", want: false},         // pid 1 runs, but started at another time
		{id: host + "/999999999/5", want: false}, // no such process
		{id: "another-host/1/1", want: true},     // cannot be checked from here
		{id: "garbage", want: false},             // not a launcher's label
		{id: host + "/notapid/1", want: false},   // not a launcher's label
	}
	for _, tt := range tests {
		if got := launcherAlive(tt.id, host); got != tt.want {
			t.Errorf("launcherAlive(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestStopTimeoutFor(t *testing.T) {
	for grace, want := range map[time.Duration]time.Duration{0: 0, time.Second: 0, 2 * time.Second: 0, 10 * time.Second: 8 * time.Second} {
		if got := StopTimeoutFor(grace); got != want {
			t.Errorf("StopTimeoutFor(%s) = %s, want %s", grace, got, want)
		}
	}
}

func TestSweepArgs(t *testing.T) {
	s := Sweep{Labels: map[string]string{"dev.sett.instance": "demo", "dev.sett.agent": "planner"}, DockerHost: "unix:///var/run/docker.sock",
		Exec: []string{"/usr/local/bin/sett-cub", "--agent", "planner"}}
	a := s.Args()
	if a[0] != SweepCommand {
		t.Fatalf("Args()[0] = %q, want %q", a[0], SweepCommand)
	}
	got, err := ParseSweepArgs(a[1:], io.Discard)
	if err != nil || !reflect.DeepEqual(got, s) {
		t.Errorf("round trip: %+v, %v; want %+v", got, err, s)
	}
	for _, bad := range [][]string{
		{"--", "/usr/local/bin/sett-cub"},                    // no label: would sweep anyone's workers
		{"--label=a=b", "--", "sett-cub"},                    // not an absolute path
		{"--label=a=b"},                                      // nothing to exec
		{"--label=novalue", "--", "/usr/local/bin/sett-cub"}, // not key=value
	} {
		if _, err := ParseSweepArgs(bad, io.Discard); !errors.Is(err, ErrUsage) {
			t.Errorf("ParseSweepArgs(%q) = %v, want ErrUsage", bad, err)
		}
	}
}
