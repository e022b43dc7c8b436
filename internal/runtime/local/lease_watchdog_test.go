package local_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/runtime/local"
)

// No tool outlives its lease: with its cub frozen by SIGSTOP, a tool that
// runs past the lease is killed by its sandbox's watchdog before the
// orchestrator grants the claim again, and the second run (once the cub
// thaws) starts after the first one ended. Times: the first run's end as
// the kernel reports it (a pidfd), the re-grant's as Redis stamped its
// lease_lost event, the second run's start as the tool wrote it.
func TestFrozenCubsToolDiesBeforeTheClaimIsGrantedAgain(t *testing.T) {
	integration(t)
	t.Parallel()
	rt := newRuntime(t)
	arg := strconv.Itoa(3000 + rand.IntN(100000)) // names this test's sleep among the host's processes
	spec := newWorkspace(t, fmt.Sprintf(`version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: 6s
agents:
  sleeper:
    command: ["sh", "-c", "cat >/dev/null; date +%%s%%N >> starts; exec sleep %s"]
    consumes: ["GoalDefined"]
    workspace:
      mode: rw
`, arg))
	rec := up(t, rt, spec)
	bb := dial(t, rec)
	g := blackboard.NewGoal("sleep past the lease", 0, "user", nil)
	if err := bb.CreateArtefact(context.Background(), g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	var first int
	eventually.True(t, 60*time.Second, "the tool runs", func() bool {
		if s := sleepers(arg); len(s) == 1 {
			first = s[0]
		}
		return first != 0
	})
	pidfd, err := unix.PidfdOpen(first, 0)
	if err != nil {
		t.Fatalf("pidfd of the tool %d: %v", first, err)
	}
	stopped := make(chan time.Time, 1)
	go func() {
		defer unix.Close(pidfd)
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err == nil || err != unix.EINTR {
				stopped <- time.Now()
				return
			}
		}
	}()
	st, err := local.ReadStatus(local.StatusPath(rec.StateDir))
	if err != nil {
		t.Fatal(err)
	}
	cub := st.Components["sleeper"].PID
	if err := syscall.Kill(cub, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozenAt := time.Now()
	t.Cleanup(func() { _ = syscall.Kill(cub, syscall.SIGCONT) })

	var stop1 time.Time
	select {
	case stop1 = <-stopped:
	case <-time.After(60 * time.Second):
		t.Fatalf("the tool of the frozen cub still runs %v after the freeze, past its lease", time.Since(frozenAt))
	}
	// The re-grant: the orchestrator's lease_lost event of the claim.
	var regrant time.Time
	eventually.True(t, 60*time.Second, "the orchestrator grants the claim again", func() bool {
		evs, err := bb.RangeEvents(context.Background(), "-", "+", 0)
		if err != nil {
			return false
		}
		for _, e := range evs {
			if e.Type == blackboard.EventLeaseLost && e.Agent == "sleeper" {
				ms, _ := strconv.ParseInt(strings.SplitN(e.StreamID, "-", 2)[0], 10, 64)
				regrant = time.UnixMilli(ms)
				return true
			}
		}
		return false
	})
	if err := syscall.Kill(cub, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var start2 time.Time
	eventually.True(t, 60*time.Second, "the thawed cub runs the second grant", func() bool {
		b, _ := os.ReadFile(filepath.Join(spec.Workspace, "starts"))
		lines := strings.Fields(string(b))
		if len(lines) < 2 {
			return false
		}
		ns, _ := strconv.ParseInt(lines[1], 10, 64)
		start2 = time.Unix(0, ns)
		return true
	})
	t.Logf("frozen at %s; first run ended %v later; re-granted %v after that; second run started %v after the first ended",
		frozenAt.Format(time.StampMilli), stop1.Sub(frozenAt), regrant.Sub(stop1), start2.Sub(stop1))
	// The re-grant's time has millisecond resolution: compare at that.
	if !stop1.Truncate(time.Millisecond).Before(regrant) {
		t.Errorf("the first run ended at %s, not before the claim was granted again at %s", stop1.Format(time.StampMilli), regrant.Format(time.StampMilli))
	}
	if !stop1.Before(start2) {
		t.Errorf("the two runs overlap: the first ended at %s, the second started at %s", stop1.Format(time.StampMicro), start2.Format(time.StampMicro))
	}
}
