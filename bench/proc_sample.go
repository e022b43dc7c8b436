package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/settdev/sett/internal/daemonproc"
)

// procSample is what /proc says about a process at one moment.
type procSample struct {
	At time.Time
	// CPUTicks is utime+stime of every thread, in clock ticks.
	CPUTicks int64
	// ChildTicks is cutime+cstime: the CPU time of children the process
	// waited for (a cub's tools).
	ChildTicks int64
	// RSSKiB is VmRSS; RSSAnonKiB (heap, stacks) and RSSFileKiB (mapped
	// files: the binary's text and data) are its main parts.
	RSSKiB, RSSAnonKiB, RSSFileKiB int64
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports (sysconf(_SC_CLK_TCK) needs
// cgo, which the harness does without).
const clockTicks = 100

// readProc samples /proc/<pid>/stat and /proc/<pid>/status.
func readProc(pid int) (procSample, error) {
	s := procSample{At: time.Now()}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, fmt.Errorf("bench: %w", err)
	}
	// The command name (field 2) may hold spaces and parentheses; the
	// fields after its closing parenthesis start with field 3 (state).
	rest := string(stat)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) < 15 {
		return s, fmt.Errorf("bench: /proc/%d/stat has %d fields after the name", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return s, fmt.Errorf("bench: /proc/%d/stat: utime %q stime %q", pid, fields[11], fields[12])
	}
	s.CPUTicks = utime + stime
	cutime, err1 := strconv.ParseInt(fields[13], 10, 64) // field 16
	cstime, err2 := strconv.ParseInt(fields[14], 10, 64) // field 17
	if err1 != nil || err2 != nil {
		return s, fmt.Errorf("bench: /proc/%d/stat: cutime %q cstime %q", pid, fields[13], fields[14])
	}
	s.ChildTicks = cutime + cstime
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, fmt.Errorf("bench: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch name {
		case "VmRSS":
			dst = &s.RSSKiB
		case "RssAnon":
			dst = &s.RSSAnonKiB
		case "RssFile":
			dst = &s.RSSFileKiB
		default:
			continue
		}
		if f := strings.Fields(value); len(f) >= 1 {
			*dst, _ = strconv.ParseInt(f[0], 10, 64)
		}
	}
	return s, nil
}

// readPssKiB returns the proportional set size of a process: its RSS with
// each shared page (the binary's text, shared by every cub) divided among
// the processes that map it.
func readPssKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("bench: no Pss in /proc/%d/smaps_rollup", pid)
}

// sampleProcs reads every process once, in order.
func sampleProcs(procs []*daemonproc.Process) ([]procSample, error) {
	out := make([]procSample, len(procs))
	for i, p := range procs {
		var err error
		if out[i], err = readProc(p.Pid()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cpuPercent is the share of one core a process used between two samples.
func cpuPercent(first, last procSample) float64 {
	window := last.At.Sub(first.At).Seconds()
	return float64(last.CPUTicks-first.CPUTicks) / clockTicks / window * 100
}

// rssBreakdown splits each process's RSS of the samples last into its
// parts, with its Pss read now.
func rssBreakdown(name, title string, procs []*daemonproc.Process, last []procSample) (Breakdown, error) {
	b := Breakdown{Name: name, Title: title,
		Columns: []string{"PROCESS", "VmRSS", "RssAnon (heap, stacks)", "RssFile (binary text/data)", "Pss (shared pages divided)"}}
	mb := func(kib int64) string { return formatValue(float64(kib) * 1024 / 1e6) }
	for i, p := range procs {
		pss, err := readPssKiB(p.Pid())
		if err != nil {
			return Breakdown{}, err
		}
		b.Rows = append(b.Rows, []string{p.Name, mb(last[i].RSSKiB), mb(last[i].RSSAnonKiB), mb(last[i].RSSFileKiB), mb(pss)})
	}
	return b, nil
}
