package local_test

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/stacktest"
)

// foregroundRun is one `sett up --runtime local --foreground`, as the
// systemd unit of `sett service install` runs it: a real process.
type foregroundRun struct {
	cmd  *exec.Cmd
	out  string // the file its output goes to
	done chan error
}

func startForeground(t *testing.T, sett, ws, name string) *foregroundRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(sett, "up", "--runtime", "local", "--name", name, "--config", filepath.Join(ws, "sett.yml"), "--foreground")
	cmd.Dir, cmd.Stdout, cmd.Stderr = ws, f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &foregroundRun{cmd: cmd, out: out, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

func (r *foregroundRun) output() string { b, _ := os.ReadFile(r.out); return string(b) }

// exit waits for the process's end and returns its exit code.
func (r *foregroundRun) exit(t *testing.T) int {
	t.Helper()
	select {
	case err := <-r.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(2 * time.Minute):
		t.Fatalf("sett up --foreground did not exit:\n%s", r.output())
		return -1
	}
}

// waitUp waits until the instance's record exists and its orchestrator is
// ready, and returns the record.
func (r *foregroundRun) waitUp(t *testing.T, ws, name string) *instance.Record {
	t.Helper()
	var rec *instance.Record
	up := eventually.Within(2*time.Minute, func() bool {
		select {
		case err := <-r.done:
			t.Fatalf("sett up --foreground exited (%v) before the instance was up:\n%s", err, r.output())
		default:
		}
		var err error
		rec, err = instance.Load(ws, name)
		return err == nil && ready(rec.Components["orchestrator"].HTTPAddr) && strings.Contains(r.output(), "Staying in the foreground")
	})
	if !up {
		t.Fatalf("the instance did not come up:\n%s", r.output())
	}
	return rec
}

// downEverywhere checks that nothing of rec runs any more and its record
// is gone, as after `sett down`.
func downEverywhere(t *testing.T, rec *instance.Record) {
	t.Helper()
	client := http.Client{Timeout: time.Second}
	if resp, err := client.Get("http://" + rec.Components["orchestrator"].HTTPAddr + "/readyz"); err == nil {
		resp.Body.Close()
		t.Errorf("the orchestrator still answers")
	}
	for name, c := range rec.Components {
		if c.PID > 0 && syscall.Kill(c.PID, 0) == nil {
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(c.PID) + "/stat"); err == nil && !strings.Contains(string(b), ") Z ") {
				t.Errorf("%s (pid %d) still runs", name, c.PID)
			}
		}
	}
	// The instance is remembered as stopped (sett list shows it), never
	// left as running.
	if r, err := instance.Load(rec.Workspace, rec.Name); err == nil && !r.Stopped() {
		t.Errorf("the instance record still says it runs")
	}
}

// `sett up --foreground` is what the systemd unit runs: a dead supervisor
// ends it with exit status 1 (Restart=on-failure starts it again) and
// nothing of the instance left running; SIGTERM (systemctl stop) stops the
// instance in order and exits 0; `sett down` from elsewhere ends it with 0
// (so the service stays stopped).
func TestUpForegroundIsWhatAServiceRuns(t *testing.T) {
	integration(t)
	b := stacktest.BuildCLI(t)
	rt := newRuntime(t)
	spec := newWorkspace(t, twoAgents)
	cleanupInstance(t, rt, spec)

	// The supervisor dies (SIGKILL): exit 1, the instance taken down.
	run := startForeground(t, b.Sett, spec.Workspace, spec.Name)
	rec := run.waitUp(t, spec.Workspace, spec.Name)
	if err := syscall.Kill(rec.SupervisorPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := run.exit(t); code != 1 {
		t.Errorf("exit status %d after the supervisor died, want 1:\n%s", code, run.output())
	}
	if !strings.Contains(run.output(), "the supervisor died") {
		t.Errorf("the output does not say the supervisor died:\n%s", run.output())
	}
	downEverywhere(t, rec)

	// Restarted (as Restart=on-failure does), then stopped by SIGTERM.
	run = startForeground(t, b.Sett, spec.Workspace, spec.Name)
	rec = run.waitUp(t, spec.Workspace, spec.Name)
	if err := run.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := run.exit(t); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0:\n%s", code, run.output())
	}
	if !strings.Contains(run.output(), "Stopped instance "+spec.Name) {
		t.Errorf("the output does not say the instance stopped:\n%s", run.output())
	}
	downEverywhere(t, rec)

	// Stopped by `sett down` from another shell: exit 0.
	run = startForeground(t, b.Sett, spec.Workspace, spec.Name)
	rec = run.waitUp(t, spec.Workspace, spec.Name)
	down := exec.Command(b.Sett, "down", "--name", spec.Name)
	down.Dir = spec.Workspace
	if out, err := down.CombinedOutput(); err != nil {
		t.Fatalf("sett down: %v\n%s", err, out)
	}
	if code := run.exit(t); code != 0 {
		t.Errorf("exit status %d after sett down, want 0:\n%s", code, run.output())
	}
	if !strings.Contains(run.output(), "was stopped (sett down)") {
		t.Errorf("the output does not say sett down stopped it:\n%s", run.output())
	}
	downEverywhere(t, rec)
}
