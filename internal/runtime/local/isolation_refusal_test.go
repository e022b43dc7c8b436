package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/local"
)

// Where the tools' sandbox cannot be built, `sett up` refuses to start
// rather than run them unisolated, and says how to opt out. Here: a root
// instance whose workspace is on ramfs, which cannot be idmapped.
func TestUpRefusesWhenToolsCannotBeIsolated(t *testing.T) {
	integration(t)
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("this test mounts a ramfs workspace and must run as root (CI does)")
	}
	rt := newRuntime(t)
	ws := t.TempDir()
	if err := unix.Mount("ramfs", ws, "ramfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		t.Fatalf("mount a ramfs workspace: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(ws, unix.MNT_DETACH) })
	cfgPath := filepath.Join(ws, "sett.yml")
	yaml := "version: \"1.0\"\nagents:\n  a:\n    command: [\"true\"]\n    consumes: [\"GoalDefined\"]\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	spec := runtime.UpSpec{Name: redistest.Instance(t), Workspace: ws, ConfigPath: cfgPath, Config: cfg}
	cleanupInstance(t, rt, spec)
	_, err = rt.Up(context.Background(), spec)
	if !errors.Is(err, local.ErrNoIsolation) || !strings.Contains(err.Error(), "isolation: none") || !strings.Contains(err.Error(), "idmap") {
		t.Fatalf("Up = %v, want ErrNoIsolation naming the idmapped workspace and the isolation: none opt-out", err)
	}
	if _, err := os.Stat(local.StatusPath(local.StateDir(ws, spec.Name))); err == nil {
		t.Errorf("Up refused but started a supervisor")
	}
}
