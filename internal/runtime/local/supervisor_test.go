package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/settdev/sett/internal/eventually"
)

// shell returns the path of sh, which these tests run as components.
func shell(t *testing.T) string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("these tests run components as sh scripts: %v", err)
	}
	return sh
}

// runSupervisor runs s in the background and returns a stop function that
// cancels it and returns Run's error.
func runSupervisor(t *testing.T, s *Supervisor) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stopped := false
	stop = func() error {
		t.Helper()
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("supervisor did not return after its context ended")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// waitStatus polls the status file until cond holds and returns it.
func waitStatus(t *testing.T, path, what string, cond func(*Status) bool) *Status {
	t.Helper()
	var st *Status
	eventually.True(t, 20*time.Second, what, func() bool {
		var err error
		st, err = ReadStatus(path)
		return err == nil && cond(st)
	})
	return st
}

func component(dir, name string, stage int, argv ...string) PlanComponent {
	return PlanComponent{Name: name, Stage: stage, Argv: argv, Dir: dir, LogPath: filepath.Join(dir, name+".log")}
}

func TestSupervisorRestartsAComponentThatExits(t *testing.T) {
	dir := t.TempDir()
	plan := &Plan{Instance: "t", StatusPath: filepath.Join(dir, "status.json"), Components: []PlanComponent{
		component(dir, "flaky", 0, shell(t), "-c", "echo started; exit 3"),
	}}
	s := &Supervisor{Plan: plan, Log: zerolog.Nop(),
		Backoff: Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond, ResetAfter: time.Hour}}
	stop := runSupervisor(t, s)

	st := waitStatus(t, plan.StatusPath, "four starts of flaky", func(st *Status) bool { return st.Components["flaky"].Starts >= 4 })
	if got := st.Components["flaky"].LastExit; got != "exit status 3" {
		t.Errorf("last exit = %q, want %q", got, "exit status 3")
	}
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	log, err := os.ReadFile(filepath.Join(dir, "flaky.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "started"); n < 4 {
		t.Errorf("the log shows %d starts, want at least 4:\n%s", n, log)
	}
	final, err := ReadStatus(plan.StatusPath)
	if err != nil {
		t.Fatal(err)
	}
	if !final.Stopping || final.Components["flaky"].State != ChildStopped {
		t.Errorf("after stop: stopping=%v, flaky state %q; want stopping and %q", final.Stopping, final.Components["flaky"].State, ChildStopped)
	}
}

func TestSupervisorStartsStagesInOrderAndStopsThemInReverse(t *testing.T) {
	dir := t.TempDir()
	order := filepath.Join(dir, "order")
	// Each component notes its start and, on SIGTERM, its stop. `wait` is
	// interrupted by a trapped signal, so the trap runs at once.
	script := func(name string) string {
		return `echo start-` + name + ` >> "$ORDER"; trap 'echo stop-` + name + ` >> "$ORDER"; exit 0' TERM; while :; do sleep 1 & wait $!; done`
	}
	env := []string{"ORDER=" + order, "PATH=" + os.Getenv("PATH")}
	var comps []PlanComponent
	for i, name := range []string{"redis", "cub", "orchestrator"} {
		c := component(dir, name, i, shell(t), "-c", script(name))
		c.Env = env
		comps = append(comps, c)
	}
	plan := &Plan{Instance: "t", StatusPath: filepath.Join(dir, "status.json"), Components: comps}
	s := &Supervisor{Plan: plan, Log: zerolog.Nop()}
	stop := runSupervisor(t, s)

	st := waitStatus(t, plan.StatusPath, "every component running", func(st *Status) bool {
		for _, c := range comps {
			if st.Components[c.Name].State != ChildRunning {
				return false
			}
		}
		return true
	})
	// Started (when the supervisor gives back its start-up memory) holds
	// once the last stage started.
	eventually.True(t, 20*time.Second, "Started after the last stage", s.Started)
	// The scripts write their start line right away; wait for all three
	// before stopping, so that no stop races a start.
	eventually.True(t, 20*time.Second, "three start lines", func() bool {
		b, _ := os.ReadFile(order)
		return strings.Count(string(b), "start-") == 3
	})
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	b, err := os.ReadFile(order)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(b))
	want := []string{"start-redis", "start-cub", "start-orchestrator", "stop-orchestrator", "stop-cub", "stop-redis"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order = %v, want %v", got, want)
	}
	for _, c := range comps {
		if pid := st.Components[c.Name].PID; processAlive(pid) {
			t.Errorf("%s (pid %d) still runs after the supervisor stopped", c.Name, pid)
		}
	}
}

// TestSupervisorIsNotStartedWhileAStageWaits: a stage whose component
// never gets ready holds the next one back, and Started stays false.
func TestSupervisorIsNotStartedWhileAStageWaits(t *testing.T) {
	dir := t.TempDir()
	unready := component(dir, "unready", 0, shell(t), "-c", "sleep 300")
	unready.HTTPAddr = "127.0.0.1:1" // nothing listens: its probe never passes
	plan := &Plan{Instance: "t", StatusPath: filepath.Join(dir, "status.json"), Components: []PlanComponent{
		unready, component(dir, "next", 1, shell(t), "-c", "sleep 300"),
	}}
	s := &Supervisor{Plan: plan, Log: zerolog.Nop(), StageTimeout: time.Hour}
	runSupervisor(t, s)
	st := waitStatus(t, plan.StatusPath, "unready running", func(st *Status) bool { return st.Components["unready"].State == ChildRunning })
	if s.Started() || st.Components["next"].State != ChildWaiting {
		t.Fatalf("Started = %v, next %q: want false and %q while stage 0 is not ready", s.Started(), st.Components["next"].State, ChildWaiting)
	}
}

func TestSupervisorKillsAComponentThatIgnoresSIGTERM(t *testing.T) {
	dir := t.TempDir()
	plan := &Plan{Instance: "t", StatusPath: filepath.Join(dir, "status.json"), Components: []PlanComponent{
		component(dir, "stubborn", 0, shell(t), "-c", `trap '' TERM; echo up; while :; do sleep 1; done`),
	}}
	plan.Components[0].Env = []string{"PATH=" + os.Getenv("PATH")}
	s := &Supervisor{Plan: plan, Log: zerolog.Nop(), StopTimeout: 100 * time.Millisecond}
	stop := runSupervisor(t, s)

	st := waitStatus(t, plan.StatusPath, "stubborn running", func(st *Status) bool { return st.Components["stubborn"].State == ChildRunning })
	pid := st.Components["stubborn"].PID
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	final, err := ReadStatus(plan.StatusPath)
	if err != nil {
		t.Fatal(err)
	}
	c := final.Components["stubborn"]
	if c.State != ChildStopped || c.LastExit != "signal: killed" {
		t.Errorf("stubborn: state %q, last exit %q; want %q after SIGKILL", c.State, c.LastExit, ChildStopped)
	}
	if processAlive(pid) {
		t.Errorf("stubborn (pid %d) still runs", pid)
	}
}

func TestSupervisorRefusesABadPlan(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		plan *Plan
	}{
		{"no plan", nil},
		{"no components", &Plan{StatusPath: filepath.Join(dir, "s.json")}},
		{"duplicate names", &Plan{StatusPath: filepath.Join(dir, "s.json"), Components: []PlanComponent{
			component(dir, "a", 0, "/bin/true"), component(dir, "a", 1, "/bin/true")}}},
		{"no command", &Plan{StatusPath: filepath.Join(dir, "s.json"), Components: []PlanComponent{component(dir, "a", 0)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Supervisor{Plan: tt.plan, Log: zerolog.Nop()}
			if err := s.Run(context.Background()); err == nil {
				t.Error("Run accepted the plan")
			}
		})
	}
}
