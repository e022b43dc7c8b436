package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// idleAndHop5 observes a fresh stack of five agents idle for the idle
// window, then times hops on it. The five are asked to bid
// (decide_rule_bids: false), as before the default changed (issue 34), so
// that the figure still measures bidding; the default's cost with many
// agents is the scale-agents step's decided curve.
func (r *runner) idleAndHop5(ctx context.Context) error {
	s, err := r.startStack(ctx, stackSpec{name: "hop-5", agents: noopAgents(5, 0), askRuleBids: true})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := r.idle(ctx, s); err != nil {
		return err
	}
	f, b, err := r.runHops(ctx, s, 5)
	if err != nil {
		return err
	}
	r.add(f)
	r.report.Breakdowns = append(r.report.Breakdowns, b)
	return nil
}

// idle samples VmRSS of every daemon once a second and their CPU time at
// both ends of the idle window, on a stack that has done no work yet.
func (r *runner) idle(ctx context.Context, s *stack) error {
	// Let start-up work (registration, first reads, the first GC) finish
	// before the window opens.
	if err := wait(ctx, min(2*time.Second, r.opts.IdleWindow)); err != nil {
		return err
	}
	procs := s.Processes()
	stats0, err := readRedisStats(ctx, s.Raw)
	if err != nil {
		return err
	}
	h0 := s.Counter.roundTrips.Load()
	first, err := sampleProcs(procs)
	if err != nil {
		return err
	}
	rss := make([][]float64, len(procs))
	record := func(ss []procSample) {
		for i, x := range ss {
			rss[i] = append(rss[i], float64(x.RSSKiB)*1024/1e6)
		}
	}
	record(first)
	last := first
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	end := time.NewTimer(r.opts.IdleWindow)
	defer end.Stop()
observe:
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-end.C:
			break observe
		case <-tick.C:
			ss, err := sampleProcs(procs)
			if err != nil {
				return err
			}
			record(ss)
			last = ss
		}
	}
	if last, err = sampleProcs(procs); err != nil {
		return err
	}
	record(last)
	stats1, err := readRedisStats(ctx, s.Raw)
	if err != nil {
		return err
	}
	var cubRSS, cubCPU []float64
	var orchCPU float64
	for i, p := range procs {
		cpu := cpuPercent(first[i], last[i])
		if p == s.Orchestrator {
			orchCPU = cpu
			continue
		}
		cubRSS = append(cubRSS, rss[i]...)
		cubCPU = append(cubCPU, cpu)
	}
	window := r.opts.IdleWindow.Round(time.Second)
	f := NewFigure("idle_rss_orchestrator", "orchestrator idle RSS", "MB", "readings", rss[0], "≤ 16 MB", Check{Stat: StatMax, Value: 16})
	f.Note = fmt.Sprintf("VmRSS of /proc/<pid>/status once a second over %s, fresh stack of 5 agents that has done no work; MB = 10^6 bytes; judged on max", window)
	r.add(f)
	f = NewFigure("idle_rss_cub", "cub idle RSS", "MB", "readings", cubRSS, "≤ 12 MB", Check{Stat: StatMax, Value: 12})
	f.Note = "as above, for the 5 cubs (readings of all of them pooled); judged on max"
	r.add(f)
	f = NewFigure("idle_cpu_orchestrator", "orchestrator idle CPU", "% of a core", "window", []float64{orchCPU}, "≤ 0.1 %", Check{Stat: StatMax, Value: 0.1})
	f.Note = fmt.Sprintf("utime+stime delta of /proc/<pid>/stat over %s ÷ %s (one sample: the whole window; tick resolution %.3f %%)",
		window, window, 100/float64(clockTicks)/r.opts.IdleWindow.Seconds())
	r.add(f)
	f = NewFigure("idle_cpu_cub", "cub idle CPU", "% of a core", "cubs", cubCPU, "≤ 0.1 %", Check{Stat: StatMax, Value: 0.1})
	f.Note = "as above, one sample per cub; judged on max"
	r.add(f)
	mem, err := rssBreakdown("idle_rss", "Idle RSS by process at the end of the window (MB = 10^6 bytes)", procs, last)
	if err != nil {
		return err
	}
	r.report.Breakdowns = append(r.report.Breakdowns, mem)
	d := stats1.Sub(stats0)
	harness := s.Counter.roundTrips.Load() - h0 + 1
	secs := r.opts.IdleWindow.Seconds()
	r.note("idle stack (orchestrator + 5 cubs, no work): Redis served %.1f round trips/s (read events) and %.1f commands/s from the daemons over %s",
		float64(d.Reads-harness)/secs, float64(d.Commands-harness)/secs, window)
	return nil
}

// throughput posts opts.ThroughputGoals goals as fast as possible, per
// round, and counts the claims completed until every workflow ended.
func (r *runner) throughput(ctx context.Context) error {
	s, err := r.startStack(ctx, stackSpec{name: "throughput", agents: noopAgents(1, r.opts.ThroughputMaxConcurrent)})
	if err != nil {
		return err
	}
	defer s.Close()
	// Warm-up: connections, page cache of the tool binary, goroutines.
	if _, _, err := r.throughputRound(ctx, s, min(20, r.opts.ThroughputGoals), "warm-up"); err != nil {
		return err
	}
	var rates []float64
	var claims int
	pids := map[string]int{"orchestrator": s.Orchestrator.Pid(), "cub": s.Cubs[0].Pid(), "redis-server": s.Redis.Pid(), "harness": os.Getpid()}
	cpu0, err := sampleAll(pids)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for round := 0; round < r.opts.ThroughputRounds; round++ {
		rate, n, err := r.throughputRound(ctx, s, r.opts.ThroughputGoals, fmt.Sprintf("round %d", round))
		if err != nil {
			return err
		}
		rates = append(rates, rate)
		claims += n
	}
	wall := time.Since(t0)
	cpu1, err := sampleAll(pids)
	if err != nil {
		return err
	}
	r.report.Breakdowns = append(r.report.Breakdowns, cpuBreakdown(cpu0, cpu1, claims, wall))
	// One more round, not in the figure, with Redis timing every command.
	if err := startRedisTimeLog(ctx, s.Raw); err != nil {
		return err
	}
	_, n, err := r.throughputRound(ctx, s, r.opts.ThroughputGoals, "profiled (Redis command log on, not counted)")
	if err != nil {
		return err
	}
	b, err := redisTimeBreakdown(ctx, s.Raw, r.scriptNames, n)
	if err != nil {
		return err
	}
	r.report.Breakdowns = append(r.report.Breakdowns, b)
	f := NewFigure("throughput_200_goals", fmt.Sprintf("throughput, %d concurrent goals", r.opts.ThroughputGoals), "claims/s",
		fmt.Sprintf("rounds (%d claims)", claims), rates, "≥ 300 claims/s", Check{Stat: StatP50, AtLeast: true, Value: 300})
	f.Note = fmt.Sprintf("per round: %d goals posted by 16 goroutines as fast as possible; claims completed (claim_completed events) ÷ (first post → last workflow_completed received); "+
		"one orchestrator, one agent with max_concurrent %d (its cub runs up to %d no-op tools at once), one claim per goal; judged on the median round",
		r.opts.ThroughputGoals, r.opts.ThroughputMaxConcurrent, r.opts.ThroughputMaxConcurrent)
	r.add(f)
	return nil
}

// sampleAll reads /proc for each named pid.
func sampleAll(pids map[string]int) (map[string]procSample, error) {
	out := make(map[string]procSample, len(pids))
	for name, pid := range pids {
		s, err := readProc(pid)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

// cpuBreakdown is where the CPU went during the throughput rounds: per
// process, CPU milliseconds per claim and share of the two cores' time
// (the cub's waited-for children, its no-op tools, on their own row).
func cpuBreakdown(before, after map[string]procSample, claims int, wall time.Duration) Breakdown {
	b := Breakdown{Name: "throughput_cpu",
		Title: fmt.Sprintf("CPU during the throughput rounds: %d claims in %s of wall time, %d CPUs (utime+stime from /proc)",
			claims, wall.Round(time.Millisecond), runtime.NumCPU()),
		Columns: []string{"PROCESS", "CPU ms PER CLAIM", "% OF ALL CPUs"}}
	row := func(name string, ticks int64) {
		secs := float64(ticks) / clockTicks
		b.Rows = append(b.Rows, []string{name, formatValue(secs * 1000 / float64(claims)),
			formatValue(secs / wall.Seconds() / float64(runtime.NumCPU()) * 100)})
	}
	var total int64
	for _, name := range []string{"orchestrator", "cub", "redis-server", "harness"} {
		d := after[name].CPUTicks - before[name].CPUTicks
		total += d
		row(name, d)
	}
	tools := after["cub"].ChildTicks - before["cub"].ChildTicks
	total += tools
	row("no-op tools (the cub's children)", tools)
	row("all of the above", total)
	perClaim := float64(total) / clockTicks * 1000 / float64(claims)
	b.Rows = append(b.Rows, []string{fmt.Sprintf("ceiling with %d dedicated CPUs at this cost", runtime.NumCPU()),
		formatValue(1000*float64(runtime.NumCPU())/perClaim) + " claims/s", ""})
	return b
}

// throughputRound runs one round and returns its rate and claim count.
func (r *runner) throughputRound(ctx context.Context, s *stack, goals int, label string) (float64, int, error) {
	ids := make([]string, goals)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < goals; i += 16 {
				id, _, err := s.PostGoal(ctx, fmt.Sprintf("throughput %s goal %d", label, i))
				if err != nil {
					errs <- err
					return
				}
				ids[i] = id
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	posted := time.Since(start)
	var last time.Time
	claims := 0
	for _, id := range ids {
		end, err := s.WaitCompleted(ctx, id)
		if err != nil {
			return 0, 0, err
		}
		if end.At.After(last) {
			last = end.At
		}
		for _, e := range s.Watcher.Events(id) {
			if e.Type == blackboard.EventClaimCompleted {
				claims++
			}
		}
	}
	elapsed := last.Sub(start)
	rate := float64(claims) / elapsed.Seconds()
	r.progress("throughput %s: %d claims in %s (posting took %s): %.0f claims/s", label, claims,
		elapsed.Round(time.Millisecond), posted.Round(time.Millisecond), rate)
	return rate, claims, nil
}
