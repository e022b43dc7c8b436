package local_test

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/local"
)

func TestUpRunsEveryComponentAndDownKeepsTheData(t *testing.T) {
	integration(t)
	t.Parallel()
	ctx := context.Background()
	rt := newRuntime(t)
	spec := newWorkspace(t, twoAgents)
	var reports []string
	spec.ProgressFunc = func(p runtime.Progress) { reports = append(reports, p.Component+":"+p.State) }
	rec := up(t, rt, spec)

	// The record describes what runs.
	stateDir := local.StateDir(spec.Workspace, spec.Name)
	if rec.Runtime != instance.RuntimeLocal || rec.Name != spec.Name || rec.StateDir != stateDir || rec.Workspace != spec.Workspace {
		t.Errorf("record = %+v", rec)
	}
	names := make([]string, 0, len(rec.Components))
	for name, c := range rec.Components {
		names = append(names, name)
		if c.PID == 0 || c.LogPath == "" {
			t.Errorf("component %s: %+v, want a pid and a log path", name, c)
		}
		if _, err := os.Stat(c.LogPath); err != nil {
			t.Errorf("component %s log: %v", name, err)
		}
	}
	slices.Sort(names)
	if want := []string{"orchestrator", "redis", "reviewer", "writer"}; !slices.Equal(names, want) {
		t.Errorf("components %v, want %v", names, want)
	}
	// Every daemon is ready, and Redis wants the generated password.
	for _, name := range []string{"orchestrator", "reviewer", "writer"} {
		if !ready(rec.Components[name].HTTPAddr) {
			t.Errorf("%s does not answer /readyz with 200 at %s", name, rec.Components[name].HTTPAddr)
		}
	}
	u, err := url.Parse(rec.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	if _, err := hex.DecodeString(pw); err != nil || len(pw) != 32 {
		t.Errorf("Redis password %q is not 32 hex characters", pw)
	}
	noAuth := *u
	noAuth.User = nil
	if bb, err := blackboard.Dial(ctx, noAuth.String(), blackboard.Options{Instance: spec.Name}); err == nil {
		bb.Close()
		t.Error("Redis accepted a connection without the password")
	}
	for _, want := range []string{"redis:ready", "writer:ready", "reviewer:ready", "orchestrator:ready"} {
		if !slices.Contains(reports, want) {
			t.Errorf("progress reports %v lack %q", reports, want)
		}
	}

	// A goal goes through the whole instance.
	bb := dial(t, rec)
	goal := postGoalAndWait(t, bb, "Add a /health endpoint")
	bb.Close()
	checkComponentsOnOwnUsers(t, rec, "orchestrator", "cub-reviewer", "cub-writer")

	// Down stops everything and keeps the data.
	if err := rt.Down(ctx, rec, false); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if pids := processesOf(t, stateDir, spec.Name); len(pids) > 0 {
		t.Errorf("processes %v still run after Down", pids)
	}
	for _, p := range []string{"redis", "redis.password"} {
		if _, err := os.Stat(filepath.Join(stateDir, p)); err != nil {
			t.Errorf("Down removed %s: %v", p, err)
		}
	}

	// The next Up of the same name finds the artefacts, with the same
	// password.
	rec2 := up(t, rt, spec)
	u2, _ := url.Parse(rec2.RedisURL)
	if pw2, _ := u2.User.Password(); pw2 != pw {
		t.Errorf("second Up has password %q, want the stored %q", pw2, pw)
	}
	bb2 := dial(t, rec2)
	if a, err := bb2.GetArtefact(ctx, goal); err != nil || a.Type != "GoalDefined" {
		t.Errorf("goal %s after down and up: %v, %v; want the GoalDefined artefact", goal, a, err)
	}
	bb2.Close()

	// Down with purge deletes the data.
	if err := rt.Down(ctx, rec2, true); err != nil {
		t.Fatalf("Down purge: %v", err)
	}
	if _, err := os.Stat(stateDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory after purge: %v, want it gone", err)
	}
	if pids := processesOf(t, stateDir, spec.Name); len(pids) > 0 {
		t.Errorf("processes %v still run after Down --purge", pids)
	}
}

func TestSupervisorRestartsAKilledComponent(t *testing.T) {
	integration(t)
	t.Parallel()
	rt := newRuntime(t)
	spec := newWorkspace(t, twoAgents)
	rec := up(t, rt, spec)
	statusPath := local.StatusPath(rec.StateDir)
	before, err := local.ReadStatus(statusPath)
	if err != nil {
		t.Fatal(err)
	}
	old := before.Components["writer"].PID
	if old == 0 || old != rec.Components["writer"].PID {
		t.Fatalf("writer pid: status %d, record %d", old, rec.Components["writer"].PID)
	}

	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var now *local.Status
	eventually.True(t, 30*time.Second, "the writer's cub restarted with a new pid and ready", func() bool {
		now, err = local.ReadStatus(statusPath)
		if err != nil {
			return false
		}
		c := now.Components["writer"]
		return c.State == local.ChildRunning && c.PID != 0 && c.PID != old && ready(rec.Components["writer"].HTTPAddr)
	})
	if c := now.Components["writer"]; c.Restarts() != 1 || c.LastExit != "signal: killed" {
		t.Errorf("writer status %+v, want one restart after SIGKILL", c)
	}
	if o := now.Components["orchestrator"]; o.PID != before.Components["orchestrator"].PID || o.Restarts() != 0 {
		t.Errorf("orchestrator status %+v: it was restarted too", o)
	}
}

func TestUpRefusesASecondInstanceOnTheWorkspace(t *testing.T) {
	integration(t)
	t.Parallel()
	ctx := context.Background()
	rt := newRuntime(t)
	first := newWorkspace(t, twoAgents)
	rec := up(t, rt, first)
	if err := instance.Save(rec); err != nil {
		t.Fatal(err)
	}

	again := first
	again.Force = true
	if _, err := rt.Up(ctx, again); !errors.Is(err, local.ErrAlreadyRunning) || !strings.Contains(err.Error(), "sett down") {
		t.Errorf("Up of the running name (even with Force) = %v, want ErrAlreadyRunning saying to run sett down", err)
	}

	second := first
	second.Name = first.Name + "-b"
	if _, err := rt.Up(ctx, second); !errors.Is(err, local.ErrAlreadyRunning) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("Up of a second name = %v, want ErrAlreadyRunning suggesting --force", err)
	}
	if _, err := os.Stat(local.StateDir(second.Workspace, second.Name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused Up created its state directory: %v", err)
	}

	second.Force = true
	rec2 := up(t, rt, second)
	if rec2.Components["orchestrator"].HTTPAddr == rec.Components["orchestrator"].HTTPAddr || rec2.RedisURL == rec.RedisURL {
		t.Errorf("two instances share addresses: %+v and %+v", rec, rec2)
	}
}

func TestDownFindsAnInstanceWhoseUpWasInterrupted(t *testing.T) {
	integration(t)
	t.Parallel()
	rt := newRuntime(t)
	spec := newWorkspace(t, twoAgents)
	// Up without a saved record is what a `sett up` killed after the
	// supervisor started leaves behind.
	rec := up(t, rt, spec)
	if _, err := rt.Up(context.Background(), spec); !errors.Is(err, local.ErrAlreadyRunning) {
		t.Errorf("Up over the record-less instance = %v, want ErrAlreadyRunning", err)
	}
	out, _, err := cliRun(t, spec.Workspace, map[string]runtime.Runtime{"local": rt}, nil, "down", "--name", spec.Name)
	if err != nil || !strings.Contains(out, "Stopped instance "+spec.Name) {
		t.Fatalf("sett down of the record-less instance: %v\n%s", err, out)
	}
	if pids := processesOf(t, rec.StateDir, spec.Name); len(pids) > 0 {
		t.Errorf("processes %v still run", pids)
	}
	if _, err := os.Stat(filepath.Join(rec.StateDir, "redis")); err != nil {
		t.Errorf("plain down deleted the data: %v", err)
	}
}

func TestUpOnAnExternalRedisLeavesItsDataThere(t *testing.T) {
	integration(t)
	t.Parallel()
	ctx := context.Background()
	srv, err := redistest.NewServer(redistest.ServerOptions{Password: "external-secret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	// The password comes from services.redis.password, as a user would
	// keep it out of the URL.
	spec := newWorkspace(t, twoAgents+"services:\n  redis:\n    url: redis://"+srv.Addr+"/0\n    password: external-secret\n")
	rt := newRuntime(t)
	rec := up(t, rt, spec)
	if _, ok := rec.Components["redis"]; ok {
		t.Error("the record has a redis component although Redis is external")
	}
	if u, _ := url.Parse(rec.RedisURL); u.Host != srv.Addr {
		t.Errorf("RedisURL host %s, want the external %s", u.Host, srv.Addr)
	}
	bb := dial(t, rec)
	goal := postGoalAndWait(t, bb, "Use the external Redis")
	if err := rt.Down(ctx, rec, true); err != nil {
		t.Fatal(err)
	}
	if a, err := bb.GetArtefact(ctx, goal); err != nil || a.ID != goal {
		t.Errorf("goal after down --purge: %v, %v; want it kept in the external Redis", a, err)
	}
	if err := rt.Logs(ctx, rec, "redis", false, io.Discard); err == nil || !strings.Contains(err.Error(), "external Redis") {
		t.Errorf("Logs redis = %v, want a note that Redis is external", err)
	}
}

func TestDownStopsComponentsThatOutliveAKilledSupervisor(t *testing.T) {
	integration(t)
	t.Parallel()
	ctx := context.Background()
	rt := newRuntime(t)
	spec := newWorkspace(t, twoAgents)
	rec := up(t, rt, spec)
	if err := instance.Save(rec); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(rec.SupervisorPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var mine runtime.Listing
	eventually.True(t, 30*time.Second, "sett list to see the instance degraded", func() bool {
		ls, err := rt.List(ctx)
		if err != nil {
			return false
		}
		for _, l := range ls {
			if l.Name == spec.Name {
				mine = l
			}
		}
		return mine.Status == local.StatusDegraded
	})
	for name, state := range mine.Components {
		if state != local.ComponentHealthy {
			t.Errorf("orphaned %s is %s, want still healthy", name, state)
		}
	}
	if err := rt.Down(ctx, rec, false); err != nil {
		t.Fatal(err)
	}
	if pids := processesOf(t, rec.StateDir, spec.Name); len(pids) > 0 {
		t.Errorf("processes %v outlived Down", pids)
	}
	ls, err := rt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Name == spec.Name && l.Status != local.StatusStopped {
			t.Errorf("after Down the instance is %s (%v), want stopped", l.Status, l.Components)
		}
	}
	_ = instance.Remove(spec.Workspace, spec.Name)
}
