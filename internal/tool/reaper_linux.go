package tool

import (
	"context"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// reapInterval backs up SIGCHLD, which coalesces.
const reapInterval = 5 * time.Second

// ReapOrphans reaps, until ctx ends, the zombie children of this process
// that Run did not start: as PID 1 of a container the cub adopts every
// orphan (a tool's daemonised grandchild), and zombies nobody waits for
// would fill the pids limit. It is meant to run only when os.Getpid() is
// 1; Run's own children are left to Run.
func ReapOrphans(ctx context.Context) {
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGCHLD)
	defer signal.Stop(sigc)
	tick := time.NewTicker(reapInterval)
	defer tick.Stop()
	for {
		reapOnce()
		select {
		case <-ctx.Done():
			return
		case <-sigc:
		case <-tick.C:
		}
	}
}

// reapOnce waits for each zombie child of this process that is not Run's.
func reapOnce() {
	startMu.Lock()
	defer startMu.Unlock()
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || isOwnChild(pid) {
			continue
		}
		st, ok := readStatPPID(pid)
		if !ok || st.ppid != self || st.state != 'Z' {
			continue
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// statPPID is the state and parent of a process.
type statPPID struct {
	state byte
	ppid  int
}

func readStatPPID(pid int) (statPPID, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return statPPID{}, false
	}
	i := lastParen(b)
	if i < 0 || i+4 >= len(b) {
		return statPPID{}, false
	}
	// After ") ": state, space, ppid.
	rest := b[i+2:]
	state := rest[0]
	j := 2
	k := j
	for k < len(rest) && rest[k] != ' ' {
		k++
	}
	ppid, err := strconv.Atoi(string(rest[j:k]))
	if err != nil {
		return statPPID{}, false
	}
	return statPPID{state: state, ppid: ppid}, true
}

func lastParen(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return i
		}
	}
	return -1
}
