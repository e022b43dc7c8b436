package metrics

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
)

// runtimeFamily writes the Go runtime series read from runtime/metrics,
// which does not stop the world (runtime.ReadMemStats would).
type runtimeFamily struct{}

var runtimeSamples = []struct{ key, name, typ, help string }{
	{"/memory/classes/heap/objects:bytes", "go_memstats_heap_alloc_bytes", "gauge", "Bytes of allocated heap objects."},
	{"/memory/classes/total:bytes", "go_memstats_sys_bytes", "gauge", "Bytes of memory obtained from the OS."},
	{"/gc/cycles/total:gc-cycles", "go_gc_cycles_total", "counter", "Completed GC cycles."},
}

func (runtimeFamily) name() string { return "go_" }
func (runtimeFamily) write(w *bufio.Writer) {
	writeHeader(w, "go_goroutines", "Number of goroutines that currently exist.", "gauge")
	writeSample(w, "go_goroutines", nil, nil, float64(runtime.NumGoroutine()))
	s := make([]metrics.Sample, len(runtimeSamples))
	for i, rs := range runtimeSamples {
		s[i].Name = rs.key
	}
	metrics.Read(s)
	for i, rs := range runtimeSamples {
		if s[i].Value.Kind() != metrics.KindUint64 {
			continue
		}
		writeHeader(w, rs.name, rs.help, rs.typ)
		writeSample(w, rs.name, nil, nil, float64(s[i].Value.Uint64()))
	}
}

// processFamily writes the process series from /proc/self (Linux; on
// other systems only what the runtime knows).
type processFamily struct{}

func (processFamily) name() string { return "process_" }
func (processFamily) write(w *bufio.Writer) {
	if st, ok := readSelfStat(); ok {
		writeHeader(w, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter")
		writeSample(w, "process_cpu_seconds_total", nil, nil, st.cpuSeconds)
		writeHeader(w, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge")
		writeSample(w, "process_resident_memory_bytes", nil, nil, st.rssBytes)
		writeHeader(w, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge")
		writeSample(w, "process_virtual_memory_bytes", nil, nil, st.vsizeBytes)
		if st.startSeconds > 0 {
			writeHeader(w, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge")
			writeSample(w, "process_start_time_seconds", nil, nil, st.startSeconds)
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		writeHeader(w, "process_open_fds", "Number of open file descriptors.", "gauge")
		writeSample(w, "process_open_fds", nil, nil, float64(len(fds)))
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		writeHeader(w, "process_max_fds", "Maximum number of open file descriptors.", "gauge")
		writeSample(w, "process_max_fds", nil, nil, float64(lim.Cur))
	}
}

type selfStat struct {
	cpuSeconds, rssBytes, vsizeBytes, startSeconds float64
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// readSelfStat parses /proc/self/stat (fields after the command name,
// which may itself contain spaces and parentheses).
func readSelfStat() (selfStat, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return selfStat{}, false
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return selfStat{}, false
	}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 (state); utime 14, stime 15, starttime 22, vsize
	// 23, rss 24 (pages).
	if len(f) < 22 {
		return selfStat{}, false
	}
	num := func(i int) float64 { v, _ := strconv.ParseFloat(f[i-3], 64); return v }
	st := selfStat{
		cpuSeconds: (num(14) + num(15)) / clockTicks,
		vsizeBytes: num(23),
		rssBytes:   num(24) * float64(os.Getpagesize()),
	}
	if boot, ok := bootTime(); ok {
		st.startSeconds = boot + num(22)/clockTicks
	}
	return st, true
}

// bootTime reads btime (seconds since the epoch) from /proc/stat.
func bootTime() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n, err == nil
		}
	}
	return 0, false
}
