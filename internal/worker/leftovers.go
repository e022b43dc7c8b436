package worker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/moby/moby/client"
)

// RemoveLeftovers removes the workers that a killed launcher of the same
// agent left behind: the containers with every label of Spec.Labels whose
// LabelLauncher names a launcher on this host that no longer runs. Workers
// of launchers that still run (the agent's other grants) and of other
// hosts are left alone. It returns how many it removed; errors wrap
// ErrDocker. With no Spec.Labels it does nothing: without them it could
// not tell this agent's workers from anyone else's.
func (l *Launcher) RemoveLeftovers(ctx context.Context) (int, error) {
	if len(l.Spec.Labels) == 0 {
		return 0, nil
	}
	f := make(client.Filters).Add("label", LabelLauncher)
	for k, v := range l.Spec.Labels {
		f = f.Add("label", k+"="+v)
	}
	list, err := l.Client.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0, fmt.Errorf("%w: list the agent's workers: %v", ErrDocker, err)
	}
	host, _ := os.Hostname()
	n := 0
	for _, c := range list.Items {
		if launcherAlive(c.Labels[LabelLauncher], host) {
			continue
		}
		l.remove(ctx, c.ID)
		n++
	}
	return n, nil
}

// launcherAlive reports whether the launcher identity id ("host/pid/start")
// may still run: it names another host (which this launcher cannot check),
// or a process of this host with that pid and start time.
func launcherAlive(id, host string) bool {
	parts := strings.Split(id, "/")
	if len(parts) != 3 {
		return false // not written by a launcher: nobody owns it
	}
	if parts[0] != host {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return false
	}
	start := processStart(pid)
	if parts[2] == "" {
		// The launcher could not read its start time (no /proc): trust
		// the pid alone.
		return processExists(pid)
	}
	return start != "" && start == parts[2]
}

// processStart returns the start time of process pid (field 22 of
// /proc/PID/stat, in clock ticks since boot), or "" when it cannot be read
// (no such process, or no /proc).
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields after its closing parenthesis, where field 3 starts.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	const startField = 22 - 3
	if len(fields) <= startField {
		return ""
	}
	return fields[startField]
}

// processExists reports whether a process with that pid exists.
func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}
