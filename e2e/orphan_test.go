package e2e

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/eventually"
)

// A tool never outlives its cub in a container either: the cub is PID 1,
// so its death ends the container's pid namespace and the tool with it;
// the restarted container runs the claim again, and never two copies at
// once.
func TestKilledCubContainerTakesItsToolAndRunsItOnce(t *testing.T) {
	t.Parallel()
	h := setup(t)
	arg := strconv.Itoa(3000 + rand.IntN(100000)) // names this test's sleep among the host's processes
	s := newStack(t, h, `version: "1.0"
orchestrator:
  bid_timeout: 3s
  lease_ttl: 5s
agents:
  sleeper:
    image: sett-cub:local
    consumes: ["GoalDefined"]
    command: ["sh", "-c", "cat >/dev/null; exec sleep `+arg+`"]
`)
	s.mustUp()
	s.postGoal("sleep")
	first := waitOneSleeper(t, arg, 0)
	pid1 := s.container("sleeper").Container.State.Pid
	if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the cub (host pid %d): %v", pid1, err)
	}
	if !eventually.Within(30*time.Second, func() bool { return !hostProcessRuns(first) }) {
		t.Fatalf("the tool (host pid %d) outlived its cub", first)
	}
	waitOneSleeper(t, arg, first)
}

// waitOneSleeper waits until one `sleep arg` other than not runs, failing
// if two ever run at once, and returns its host pid.
func waitOneSleeper(t *testing.T, arg string, not int) int {
	t.Helper()
	var got int
	eventually.True(t, 2*time.Minute, "a run of the tool (sleep "+arg+")", func() bool {
		var found []int
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			pid, err := strconv.Atoi(p.Name())
			if err != nil || !hostProcessRuns(pid) {
				continue
			}
			if b, _ := os.ReadFile("/proc/" + p.Name() + "/cmdline"); string(b) == "sleep\x00"+arg+"\x00" {
				found = append(found, pid)
			}
		}
		if len(found) > 1 {
			t.Fatalf("%d copies of the tool run at once: %v", len(found), found)
		}
		if len(found) == 1 && found[0] != not {
			got = found[0]
			return true
		}
		return false
	})
	return got
}

// hostProcessRuns reports whether pid runs on the host (a zombie does not).
func hostProcessRuns(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}
