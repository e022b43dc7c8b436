package docker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

func TestLoadPassword(t *testing.T) {
	ws := t.TempDir()
	spec := runtime.UpSpec{Name: "demo", Workspace: ws, Config: parseConfig(t, planYAML)}

	first, err := loadPassword(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !first.generated || len(first.value) != 48 {
		t.Fatalf("first password %+v: want a generated one of 48 hex digits", first)
	}
	again, err := loadPassword(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !again.generated || again.value == first.value {
		t.Errorf("an unsaved password is not reused: want a new one, got %+v", again)
	}

	dir := stateDir(ws, "demo")
	if err := first.save(dir); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, passwordFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("saved password: %v, mode %v; want mode 0600", err, st.Mode())
	}
	kept, err := loadPassword(spec)
	if err != nil {
		t.Fatal(err)
	}
	if kept.generated || kept.value != first.value {
		t.Errorf("after save: %+v, want the saved %q, not generated", kept, first.value)
	}

	spec.Config = parseConfig(t, planYAML+"services:\n  redis:\n    password: configured\n")
	conf, err := loadPassword(spec)
	if err != nil {
		t.Fatal(err)
	}
	if conf.generated || conf.value != "configured" {
		t.Errorf("services.redis.password wins: got %+v", conf)
	}
}

func TestWithoutDaemon(t *testing.T) {
	rt, err := New(Options{Host: "unix://" + filepath.Join(t.TempDir(), "no-docker.sock")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	spec := runtime.UpSpec{Name: "demo", Workspace: t.TempDir(), ConfigPath: "/x/sett.yml", Config: parseConfig(t, planYAML)}
	_, err = rt.Up(ctx, spec)
	if !errors.Is(err, ErrDockerUnavailable) || !strings.Contains(err.Error(), "no-docker.sock") {
		t.Errorf("Up: %v, want ErrDockerUnavailable naming the daemon", err)
	}
	if _, err := rt.List(ctx); !errors.Is(err, ErrDockerUnavailable) {
		t.Errorf("List: %v", err)
	}
	rec := &instance.Record{Name: "demo", Workspace: spec.Workspace}
	if err := rt.Down(ctx, rec, false); !errors.Is(err, ErrDockerUnavailable) {
		t.Errorf("Down: %v", err)
	}
	if err := rt.Logs(ctx, rec, "redis", false, nil); !errors.Is(err, ErrDockerUnavailable) {
		t.Errorf("Logs: %v", err)
	}
	// `sett down` without a record asks every runtime: no daemon means
	// nothing of this runtime to stop, not an error.
	stopped, purged, err := rt.DownByName(ctx, spec.Workspace, "demo", true)
	if stopped || purged || err != nil {
		t.Errorf("DownByName = %v, %v, %v; want false, false, nil", stopped, purged, err)
	}
	if _, err := os.Stat(filepath.Join(spec.Workspace, ".sett")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Up without a daemon touched the workspace (%v)", err)
	}
}
