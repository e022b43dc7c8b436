package bench

import (
	"context"
	"fmt"
	"time"
)

// The idle step reads a stack in its first 30 seconds, right after each
// daemon gave back its start-up memory (internal/idlemem). Left alone
// longer, a daemon maps back part of its binary: the Go runtime forces a
// collection every two minutes, waiting goroutines' stacks shrink and
// grow again (which reads the frame tables), and every page fault on the
// binary maps up to 64 KiB of neighbours that are in the page cache. The
// long-idle step therefore keeps a second stack idle from the start of
// the run (right after the idle step, so that the two stacks never share
// the page cache during the idle window) and reads it at the end, after
// Options.LongIdle: the steady state a user sees in ps after a quiet hour.

// longIdleStack is the second idle stack and when it became ready.
type longIdleStack struct {
	stack *stack
	ready time.Time
	first []procSample
}

// startLongIdle starts the long-idle stack: the same five agents as the
// idle step's, and no work ever.
func (r *runner) startLongIdle(ctx context.Context) (*longIdleStack, error) {
	s, err := r.startStack(ctx, stackSpec{name: "idle-long", agents: noopAgents(5, 0)})
	if err != nil {
		return nil, err
	}
	l := &longIdleStack{stack: s, ready: time.Now()}
	if l.first, err = sampleProcs(s.Processes()); err != nil {
		s.Close()
		return nil, err
	}
	return l, nil
}

// longIdle waits until the long-idle stack, which Run started before the
// first step after the idle one, has been idle for Options.LongIdle, then
// reads the RSS of its daemons and their CPU over the whole time.
func (r *runner) longIdle(ctx context.Context) error {
	l := r.longIdleStack
	if err := wait(ctx, time.Until(l.ready.Add(r.opts.LongIdle))); err != nil {
		return err
	}
	procs := l.stack.Processes()
	last, err := sampleProcs(procs)
	if err != nil {
		return err
	}
	var orchRSS, orchCPU float64
	var cubRSS, cubCPU []float64
	for i, p := range procs {
		rss := float64(last[i].RSSKiB) * 1024 / 1e6
		cpu := cpuPercent(l.first[i], last[i])
		if p == l.stack.Orchestrator {
			orchRSS, orchCPU = rss, cpu
			continue
		}
		cubRSS = append(cubRSS, rss)
		cubCPU = append(cubCPU, cpu)
	}
	idle := last[0].At.Sub(l.ready).Round(time.Second)
	f := NewFigure("long_idle_rss_orchestrator", fmt.Sprintf("orchestrator RSS after %s idle", idle), "MB", "reading", []float64{orchRSS}, "≤ 16 MB", Check{Stat: StatMax, Value: 16})
	f.Note = fmt.Sprintf("VmRSS once, %s after a fresh stack of 5 agents became ready; the stack did no work and stayed up through the whole run (its idle daemons ran beside the other steps)", idle)
	r.add(f)
	f = NewFigure("long_idle_rss_cub", fmt.Sprintf("cub RSS after %s idle", idle), "MB", "cubs", cubRSS, "≤ 12 MB", Check{Stat: StatMax, Value: 12})
	f.Note = "as above, one reading per cub; judged on max"
	r.add(f)
	// Informational: the other steps load both cores meanwhile, which
	// makes each of the idle daemons' wake-ups cost more than on a quiet
	// machine; the idle step's window is the judged reading.
	f = NewFigure("long_idle_cpu_orchestrator", fmt.Sprintf("orchestrator idle CPU over %s, beside the run", idle), "% of a core", "window", []float64{orchCPU}, "")
	f.Note = fmt.Sprintf("utime+stime delta of /proc/<pid>/stat from ready to the reading (tick resolution %.4f %%), while the other steps loaded the machine; informational", 100/float64(clockTicks)/idle.Seconds())
	r.add(f)
	f = NewFigure("long_idle_cpu_cub", fmt.Sprintf("cub idle CPU over %s, beside the run", idle), "% of a core", "cubs", cubCPU, "")
	f.Note = "as above, one sample per cub"
	r.add(f)
	b, err := rssBreakdown("long_idle_rss", fmt.Sprintf("RSS by process after %s idle (MB = 10^6 bytes)", idle), procs, last)
	if err != nil {
		return err
	}
	r.report.Breakdowns = append(r.report.Breakdowns, b)
	return nil
}
