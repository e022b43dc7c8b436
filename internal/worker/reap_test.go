package worker

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/eventually"
)

func TestParseDeadline(t *testing.T) {
	for _, tc := range []struct {
		line string
		want time.Duration
		ok   bool
	}{
		{"123456789\n", 123456789, true},
		{" 42 ", 42, true},
		{"", 0, false},
		{"0", 0, false},
		{"-5", 0, false},
		{"12s", 0, false},
	} {
		got, ok := ParseDeadline(tc.line)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseDeadline(%q) = %v, %v; want %v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
	if _, err := ParseReapArgs(nil, &strings.Builder{}); err == nil {
		t.Error("reap without --container accepted")
	}
	r, err := ParseReapArgs(Reap{Container: "abc", DockerHost: "unix:///x.sock"}.Args()[1:], &strings.Builder{})
	if err != nil || r.Container != "abc" || r.DockerHost != "unix:///x.sock" {
		t.Errorf("round trip: %+v, %v", r, err)
	}
}

// TestWorkerIsRemovedWhenItsLeaseLapsesAfterItsLauncherDied plays the
// cub: it hands the launcher the lease deadlines on fd 3 (SETT_LEASE_FD),
// as tool.Run does for an unsandboxed tool with a Fence, and renews them.
// The launcher is killed outright (SIGKILL: no cleanup) while its worker
// runs. The worker stays while the renewals go on, past the first
// deadline; once they stop (the cub died: the pipe is closed) it is
// removed after the last deadline, by the reaper alone.
func TestWorkerIsRemovedWhenItsLeaseLapsesAfterItsLauncherDied(t *testing.T) {
	cli := dockerClient(t)
	bin := buildLauncher(t)
	s := testSpec(t, "sleep 300")
	s.DockerHost = hostOf(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	send := func(d time.Duration) time.Duration {
		at := MonotonicNow() + d
		if _, err := fmt.Fprintf(w, "%d\n", int64(at)); err != nil {
			t.Fatal(err)
		}
		return at
	}
	first := send(4 * time.Second)
	cmd := exec.Command(bin, s.Args()...)
	cmd.Stdin = strings.NewReader("{}")
	cmd.Env = append(os.Environ(), EnvLeaseFD+"=3")
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	id := runningContainerOf(t, cli, s)
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if ids := containersOf(t, cli, s); len(ids) != 1 || ids[0] != id {
		t.Fatalf("right after the launcher's SIGKILL the worker should still be there: %v", ids)
	}
	if p := reapers(bin); len(p) != 1 {
		t.Fatalf("reapers %v, want the worker's one, outliving its launcher", p)
	}

	// The cub renews the lease every second (its keeper does at a third
	// of the TTL): the worker outlives the first deadline.
	tick := time.NewTicker(time.Second)
	last := first
	for MonotonicNow() < first+time.Second {
		<-tick.C
		last = send(3 * time.Second)
	}
	tick.Stop()
	if ids := containersOf(t, cli, s); len(ids) != 1 {
		t.Fatalf("the worker was removed although its lease was renewed: %v", ids)
	}

	// The cub dies: no more renewals, EOF on the pipe.
	_ = w.Close()
	var goneAt time.Duration
	eventually.True(t, 60*time.Second, "the reaper removes the worker once the lease lapses", func() bool {
		if len(containersOf(t, cli, s)) == 0 {
			goneAt = MonotonicNow()
			return true
		}
		return false
	})
	eventually.True(t, 30*time.Second, "the reaper exits", func() bool { return len(reapers(bin)) == 0 })
	if goneAt < last {
		t.Errorf("the worker was removed %v before its last deadline", last-goneAt)
	}
	t.Logf("worker removed (seen by polling) %v after its lease's last deadline", (goneAt - last).Round(time.Millisecond))
}

// reapers lists the pids of the reaper processes of binary bin.
func reapers(bin string) []string {
	var out []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + p.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && args[0] == bin && args[1] == ReapCommand {
			// A zombie has an empty cmdline: only live reapers count.
			out = append(out, p.Name())
		}
	}
	return out
}

// TestReaperEndsWithItsWorker: a run that ends normally leaves no reaper
// behind, although the cub keeps the deadline pipe open.
func TestReaperEndsWithItsWorker(t *testing.T) {
	cli := dockerClient(t)
	bin := buildLauncher(t)
	s := testSpec(t, "cat >/dev/null; echo done")
	s.DockerHost = hostOf(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fmt.Fprintf(w, "%d\n", int64(MonotonicNow()+time.Minute))
	cmd := exec.Command(bin, s.Args()...)
	cmd.Stdin = strings.NewReader("{}")
	cmd.Env = append(os.Environ(), EnvLeaseFD+"=3")
	cmd.ExtraFiles = []*os.File{r}
	out, err := cmd.CombinedOutput()
	_ = r.Close()
	if err != nil || !strings.Contains(string(out), "done") {
		t.Fatalf("launcher: %v, output %q", err, out)
	}
	if ids := containersOf(t, cli, s); len(ids) != 0 {
		t.Fatalf("the worker is still there: %v", ids)
	}
	eventually.True(t, 30*time.Second, "the reaper exits once its worker is removed", func() bool { return len(reapers(bin)) == 0 })
}
