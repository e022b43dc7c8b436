package local

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/docker"
)

const controllerConfig = `version: "1.0"
vault: {path: notes}
agents:
  planner:
    mode: controller
    stop_grace: 5s
    workspace: {mode: ro}
    resources: {cpus: 0.25, memory: 32MiB}
    worker:
      image: sett-example-writer:local
      command: ["sett-writer", "--type", "Plan"]
`

func TestWorkerSpecOfAControllerAgent(t *testing.T) {
	ws := t.TempDir()
	cfg := testConfig(t, controllerConfig)
	spec := runtime.UpSpec{Name: "demo", Workspace: ws, ConfigPath: filepath.Join(ws, "sett.yml"), Config: cfg}
	a, _ := cfg.Agent("planner")
	got := workerSpec(spec, "planner", a)
	if got.Image != "sett-example-writer:local" || !slices.Equal(got.Command, []string{"sett-writer", "--type", "Plan"}) {
		t.Errorf("image %q command %q", got.Image, got.Command)
	}
	// The cub tells its tools the host path of the workspace: the worker
	// sees it there, read-only as configured, with .sett and the vault
	// hidden.
	if got.Workspace != ws || got.WorkspaceTarget != ws || !got.WorkspaceReadOnly {
		t.Errorf("workspace %q at %q read-only %v, want %q at the same path, read-only", got.Workspace, got.WorkspaceTarget, got.WorkspaceReadOnly, ws)
	}
	if !slices.Equal(got.Masks, []string{filepath.Join(ws, ".sett"), filepath.Join(ws, "notes")}) {
		t.Errorf("masks %q", got.Masks)
	}
	if got.User == "" || strings.HasPrefix(got.User, "0:") || !got.ReadOnlyRoot || got.PidsLimit == 0 ||
		got.NanoCPUs != 250_000_000 || got.Memory != 32<<20 || got.StopTimeout != 3*time.Second {
		t.Errorf("hardening: user %q read-only root %v pids %d cpus %d memory %d stop %s", got.User, got.ReadOnlyRoot, got.PidsLimit, got.NanoCPUs, got.Memory, got.StopTimeout)
	}
	if got.Labels[docker.LabelInstance] != "demo" || got.Labels[docker.LabelComponent] != docker.ComponentWorker || got.Labels[docker.LabelAgent] != "planner" {
		t.Errorf("labels %v", got.Labels)
	}
}

func TestUpNeedsTheWorkerLauncherForControllers(t *testing.T) {
	ws := t.TempDir()
	yaml := controllerConfig + "services:\n  redis:\n    url: redis://127.0.0.1:1\n"
	cfgPath := filepath.Join(ws, "sett.yml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	notFound := func(string) (string, error) { return "", exec.ErrNotFound }
	rt := &Runtime{Executable: filepath.Join(fakeBinDir(t, "sett", "sett-orchestrator", "sett-cub"), "sett"), LookPathFunc: notFound}
	_, err := rt.Up(context.Background(), runtime.UpSpec{Name: "demo", Workspace: ws, ConfigPath: cfgPath, Config: testConfig(t, yaml)})
	if !errors.Is(err, ErrBinaryNotFound) || !strings.Contains(err.Error(), "sett-worker is neither next to") {
		t.Fatalf("Up = %v, want ErrBinaryNotFound naming sett-worker", err)
	}
}
