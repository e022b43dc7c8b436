package local_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/cli"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/local"
	"github.com/settdev/sett/internal/stacktest"
	"github.com/settdev/sett/internal/tool"
)

func TestCLIUpListLogsDown(t *testing.T) {
	integration(t)
	t.Parallel()
	rt := newRuntime(t)
	spec := newWorkspace(t, twoAgents)
	cleanupInstance(t, rt, spec)
	runtimes := map[string]runtime.Runtime{"local": rt}
	run := func(args ...string) (string, string, error) {
		return cliRun(t, spec.Workspace, runtimes, nil, args...)
	}

	out, _, err := run("up", "--runtime", "local", "--name", spec.Name)
	if err != nil {
		t.Fatalf("sett up: %v\n%s", err, out)
	}
	for _, want := range []string{"orchestrator  ready", "writer        ready", "Instance " + spec.Name + " is up", "sett forage"} {
		if !strings.Contains(out, want) {
			t.Errorf("sett up output lacks %q:\n%s", want, out)
		}
	}
	rec, err := instance.Load(spec.Workspace, spec.Name)
	if err != nil {
		t.Fatalf("no record after sett up: %v", err)
	}

	out, _, err = run("list", "-o", "json")
	if err != nil {
		t.Fatalf("sett list: %v", err)
	}
	var listings []runtime.Listing
	if err := json.Unmarshal([]byte(out), &listings); err != nil {
		t.Fatalf("sett list -o json: %v\n%s", err, out)
	}
	var mine *runtime.Listing
	for i := range listings {
		if listings[i].Name == spec.Name {
			mine = &listings[i]
		}
	}
	if mine == nil || mine.Status != local.StatusRunning || mine.Runtime != "local" || len(mine.Components) != 4 {
		t.Fatalf("sett list: %+v, want %s running with 4 components", listings, spec.Name)
	}
	for name, state := range mine.Components {
		if state != local.ComponentHealthy {
			t.Errorf("component %s is %s", name, state)
		}
	}

	out, _, err = run("logs", "orchestrator")
	if err != nil || !strings.Contains(out, "orchestrator starting") {
		t.Errorf("sett logs orchestrator: %v\n%s", err, out)
	}
	if _, _, err := run("logs", "nobody"); !errors.Is(err, local.ErrUnknownComponent) || !strings.Contains(err.Error(), "orchestrator, redis, reviewer, supervisor, writer") {
		t.Errorf("sett logs nobody = %v, want the list of components", err)
	}

	out, _, err = run("down")
	if err != nil {
		t.Fatalf("sett down: %v", err)
	}
	if !strings.Contains(out, "Kept its Redis data") || !strings.Contains(out, rec.StateDir) {
		t.Errorf("sett down does not say what it kept:\n%s", out)
	}
	// Stopped, the instance keeps its identity: its record stays, marked
	// stopped, and `sett list` shows it.
	if kept, err := instance.Load(spec.Workspace, spec.Name); err != nil || !kept.Stopped() || kept.Runtime != "local" {
		t.Errorf("record after sett down: %+v, %v, want it kept as stopped", kept, err)
	}
	if pids := processesOf(t, rec.StateDir, spec.Name); len(pids) > 0 {
		t.Errorf("processes %v still run after sett down", pids)
	}
	out, _, err = run("list", "-o", "json")
	listings = nil
	if err := json.Unmarshal([]byte(out), &listings); err != nil {
		t.Fatalf("sett list -o json after down: %v\n%s", err, out)
	}
	var stopped *runtime.Listing
	for i := range listings {
		if listings[i].Name == spec.Name {
			stopped = &listings[i]
		}
	}
	if stopped == nil || stopped.Status != local.StatusStopped || stopped.Runtime != "local" {
		t.Errorf("sett list after down: %v, %+v, want %s stopped", err, stopped, spec.Name)
	}

	// --purge deletes the kept data and forgets the instance.
	out, _, err = run("down", "--purge", "--name", spec.Name)
	if err != nil || !strings.Contains(out, "Deleted the data kept for instance "+spec.Name) {
		t.Errorf("sett down --purge after down: %v\n%s", err, out)
	}
	if _, err := os.Stat(rec.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory after purge: %v", err)
	}
	if _, err := instance.Load(spec.Workspace, spec.Name); !errors.Is(err, instance.ErrNoInstance) {
		t.Errorf("record after sett down --purge: %v, want none", err)
	}
}

// brokenBinDir is a bin directory with the real sett and
// sett-orchestrator and a sett-cub made from script.
func brokenBinDir(t *testing.T, script string) string {
	t.Helper()
	b := stacktest.BuildCLI(t)
	dir := t.TempDir()
	for _, p := range []string{b.Sett, b.Orchestrator, b.Writer, b.Reviewer} {
		if err := os.Symlink(p, filepath.Join(dir, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	// As the tools' sandbox helper (which sett up probes first) it is the
	// real cub: only the cub itself is broken.
	helper := "[ \"$1\" = " + tool.SandboxArg + " ] && exec " + b.Cub + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "sett-cub"), []byte("#!/bin/sh\n"+helper+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestUpFailureLeavesNothingBehind(t *testing.T) {
	integration(t)
	tests := []struct {
		name    string
		cub     string // sett-cub script
		timeout time.Duration
		want    []string // in the error
	}{
		{"cub exits at start", `echo "sett-cub: simulated failure" >&2; exit 2`, 0,
			[]string{"(sett-cub): exited 3 times without becoming ready (last: exit status 2)", "simulated failure"}},
		// The deadline covers Redis and the orchestrator becoming ready
		// before the cub starts; 15 s leaves a loaded machine room to get
		// that far (2 s did not), so the cub's own log is in the error.
		{"cub never ready", `echo "sett-cub: hanging" >&2; exec sleep 600`, 15 * time.Second,
			[]string{"not ready after 15s", "hanging"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bin := brokenBinDir(t, tt.cub)
			rt := &local.Runtime{Executable: filepath.Join(bin, "sett"), ReadyTimeout: tt.timeout}
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "sett.yml"), []byte(twoAgents), 0o644); err != nil {
				t.Fatal(err)
			}
			name := redistest.Instance(t)
			out, _, err := cliRun(t, ws, map[string]runtime.Runtime{"local": rt}, nil, "up", "--runtime", "local", "--name", name)
			if err == nil {
				cleanupInstance(t, rt, runtime.UpSpec{Name: name, Workspace: ws})
				t.Fatalf("sett up succeeded with a broken sett-cub:\n%s", out)
			}
			if !errors.Is(err, local.ErrNotReady) || cli.ExitCode(err) != cli.ExitFailure {
				t.Errorf("error %v (exit code %d), want ErrNotReady and exit code %d", err, cli.ExitCode(err), cli.ExitFailure)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if !strings.Contains(out, "failed") {
				t.Errorf("progress does not show the failure:\n%s", out)
			}
			stateDir := local.StateDir(ws, name)
			if pids := processesOf(t, stateDir, name); len(pids) > 0 {
				t.Errorf("processes %v still run after the failed up", pids)
			}
			if recs, err := instance.InWorkspace(ws); err != nil || len(recs) > 0 {
				t.Errorf("records after the failed up: %v, %v", recs, err)
			}
			if _, err := os.Stat(filepath.Join(ws, ".sett")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf(".sett after the failed up: %v, want it removed", err)
			}
		})
	}
}

func TestInitScaffoldRunsUnchanged(t *testing.T) {
	integration(t)
	t.Parallel()
	rt := newRuntime(t)
	runtimes := map[string]runtime.Runtime{"local": rt}
	ws := t.TempDir()
	if out, _, err := cliRun(t, ws, runtimes, nil, "init"); err != nil {
		t.Fatalf("sett init: %v\n%s", err, out)
	}
	name := redistest.Instance(t)
	cleanupInstance(t, rt, runtime.UpSpec{Name: name, Workspace: ws})
	// Only the instance name is chosen here (through the environment, as a
	// user could); sett.yml is exactly what init wrote.
	env := map[string]string{"SETT_INSTANCE": name}
	out, errOut, err := cliRun(t, ws, runtimes, env, "up", "--runtime", "local")
	if err != nil {
		t.Fatalf("sett up on the scaffold: %v\n%s", err, out)
	}
	if errOut != "" {
		t.Errorf("sett up printed warnings for the scaffold:\n%s", errOut)
	}
	rec, err := instance.Load(ws, name)
	if err != nil {
		t.Fatal(err)
	}
	bb := dial(t, rec)
	postGoalAndWait(t, bb, "Say hello")
	if out, _, err := cliRun(t, ws, runtimes, env, "down", "--purge"); err != nil || !strings.Contains(out, "Deleted its data") {
		t.Errorf("sett down --purge: %v\n%s", err, out)
	}
}
