package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/connect"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/docker"
)

func TestDownStopsThroughTheRecordsRuntimeAndForgetsIt(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		purge    bool
		stateDir string
		want     string
	}{
		{"keeps data by default", []string{"down"}, false, "/ws/.sett/local/demo", "Kept its Redis data, password and logs in /ws/.sett/local/demo"},
		{"purge deletes it", []string{"down", "--purge"}, true, "/ws/.sett/local/demo", "Deleted its data"},
		{"a runtime without a state directory", []string{"down"}, false, "", "Kept its Redis data: `sett up --name demo --runtime local`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := lifecycleWorkspace(t, lifecycleConfig)
			rec := recordFor("local")(runtime.UpSpec{Name: "demo", Workspace: ws})
			rec.StateDir = tt.stateDir
			if err := instance.Save(rec); err != nil {
				t.Fatal(err)
			}
			rt := &stubRuntime{name: "local"}
			out, _, err := runLifecycle(t, ws, map[string]runtime.Runtime{"local": rt}, nil, tt.args...)
			if err != nil {
				t.Fatalf("sett down: %v", err)
			}
			if len(rt.downs) != 1 || rt.downs[0] != tt.purge {
				t.Errorf("Down calls %v, want one with purge=%v", rt.downs, tt.purge)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			// Stopped, the instance is remembered (with its runtime);
			// purged, it is forgotten.
			rec, err = instance.Load(ws, "demo")
			switch {
			case tt.purge && !errors.Is(err, instance.ErrNoInstance):
				t.Errorf("record after down --purge: %+v, %v", rec, err)
			case !tt.purge && (err != nil || !rec.Stopped() || rec.Runtime != "local"):
				t.Errorf("record after down: %+v, %v; want it kept as a stopped local instance", rec, err)
			}
		})
	}
}

func TestDownWithoutAnInstanceSaysSo(t *testing.T) {
	ws := lifecycleWorkspace(t, lifecycleConfig)
	rt := &stubRuntime{name: "local"}
	_, _, err := runLifecycle(t, ws, map[string]runtime.Runtime{"local": rt}, nil, "down", "--purge")
	if !errors.Is(err, instance.ErrNoInstance) {
		t.Errorf("err = %v, want ErrNoInstance", err)
	}
}

func TestDownOfARuntimeThisBuildLacks(t *testing.T) {
	ws := lifecycleWorkspace(t, lifecycleConfig)
	if err := instance.Save(recordFor("docker")(runtime.UpSpec{Name: "demo", Workspace: ws})); err != nil {
		t.Fatal(err)
	}
	_, _, err := runLifecycle(t, ws, map[string]runtime.Runtime{"local": &stubRuntime{name: "local"}}, nil, "down")
	if err == nil || !strings.Contains(err.Error(), `started with the "docker" runtime`) {
		t.Errorf("err = %v", err)
	}
	if _, err := instance.Load(ws, "demo"); err != nil {
		t.Errorf("the record went away although nothing was stopped: %v", err)
	}
}

// recordlessStub is a runtime that also finds instances without a record,
// and answers every DownByName with err.
type recordlessStub struct {
	stubRuntime
	err   error
	names []string
}

func (s *recordlessStub) DownByName(_ context.Context, _, name string, _ bool) (bool, bool, error) {
	s.names = append(s.names, name)
	return false, false, s.err
}

// In the directory of a compose stack, `sett down` means the stack's
// instance (from .env, as `sett status` finds it), and passes on the
// Docker runtime's refusal.
func TestDownInAComposeDirectoryMeansItsInstance(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	for name, text := range map[string]string{connect.ComposeFile: "services: {}\n",
		connect.ComposeEnvFile: "COMPOSE_PROJECT_NAME=p\nSETT_INSTANCE=stack1\nSETT_REDIS_PASSWORD=pw\nSETT_REDIS_PORT=6390\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	refusal := fmt.Errorf("%w: run `docker-compose down` in %s", docker.ErrComposeManaged, dir)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bare", []string{"down"}, "stack1"},
		{"purge", []string{"down", "--purge"}, "stack1"},
		{"--name wins", []string{"down", "--name", "other"}, "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &recordlessStub{stubRuntime: stubRuntime{name: "docker"}, err: refusal}
			_, _, err := runLifecycle(t, dir, map[string]runtime.Runtime{"docker": rt}, nil, tt.args...)
			if !errors.Is(err, docker.ErrComposeManaged) || !strings.Contains(err.Error(), "docker-compose down") {
				t.Errorf("err = %v, want the runtime's refusal", err)
			}
			if len(rt.names) != 1 || rt.names[0] != tt.want {
				t.Errorf("DownByName asked for %v, want [%s]", rt.names, tt.want)
			}
			if len(rt.downs) != 0 {
				t.Errorf("Down called: %v", rt.downs)
			}
		})
	}
}
