package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// roundTrips counts, in an untimed pass, what one claim of the hop
// scenarios costs in Redis traffic, for 1 agent (the default: its bid
// decided by its rules) and 5 agents asked to bid, as the hop-5 stack.
func (r *runner) roundTrips(ctx context.Context) error {
	for _, agents := range []int{1, 5} {
		if err := r.countRoundTrips(ctx, agents); err != nil {
			return err
		}
	}
	return nil
}

// countRoundTrips runs the hop scenario with every daemon behind a
// RoundTripProxy, in batches of sequential one-hop goals, and derives per
// batch: round trips and commands the daemons sent per claim (proxy), and
// commands Redis executed per claim, script-internal ones included (INFO),
// less the harness's own.
func (r *runner) countRoundTrips(ctx context.Context, agents int) error {
	s, err := r.startStack(ctx, stackSpec{name: fmt.Sprintf("rt-%d", agents), agents: noopAgents(agents, 0), proxied: true, askRuleBids: agents > 1})
	if err != nil {
		return err
	}
	defer s.Close()
	for i := 0; i < 3; i++ { // warm-up: connections, first reads
		if _, _, _, err := s.RunGoal(ctx, "warm-up"); err != nil {
			return err
		}
	}
	goalCost, err := r.goalCommands(ctx, s)
	if err != nil {
		return err
	}
	snapshot := func() map[string]ProxyCounts {
		out := make(map[string]ProxyCounts, len(s.Proxies))
		for name, p := range s.Proxies {
			out[name] = p.Snapshot()
		}
		return out
	}
	// What the daemons ask of Redis with no work at all: every idle
	// wake-up costs CPU (idle CPU) and shows up here.
	idleWindow := max(r.opts.IdleWindow/6, 100*time.Millisecond)
	i0, t0 := snapshot(), time.Now()
	if err := wait(ctx, idleWindow); err != nil {
		return err
	}
	i1, elapsed := snapshot(), time.Since(t0)
	idle := map[string]ProxyCounts{}
	for name := range i1 {
		idle[name] = i1[name].Sub(i0[name])
	}
	var rts, sent, executed, reads, cpu []float64
	perProc := map[string]ProxyCounts{}
	redisTotal := redisStats{Calls: map[string]int64{}}
	claims := 0
	for b := 0; b < r.opts.RoundTripBatches; b++ {
		st0, err := readRedisStats(ctx, s.Raw)
		if err != nil {
			return err
		}
		h0, c0 := s.Counter.roundTrips.Load(), s.Counter.commands.Load()
		p0 := snapshot()
		n := r.opts.RoundTripBatchClaims
		for i := 0; i < n; i++ {
			if _, _, _, err := s.RunGoal(ctx, "count"); err != nil {
				return err
			}
		}
		p1 := snapshot()
		h1, c1 := s.Counter.roundTrips.Load(), s.Counter.commands.Load()
		st1, err := readRedisStats(ctx, s.Raw)
		if err != nil {
			return err
		}
		var sum ProxyCounts
		for name := range p1 {
			d := p1[name].Sub(p0[name])
			sum = sum.Add(d)
			perProc[name] = perProc[name].Add(d)
		}
		d := st1.Sub(st0)
		// The harness's share of Redis' totals: what its hook counted, the
		// commands its goal scripts ran inside Redis, the first INFO
		// (executed after its own snapshot) and the second INFO's read
		// (counted before the snapshot is taken).
		harnessCmds := (c1 - c0 - int64(n)) + int64(n)*goalCost.Commands + 1
		harnessReads := (h1 - h0) + 1
		rts = append(rts, float64(sum.RoundTrips)/float64(n))
		sent = append(sent, float64(sum.Commands)/float64(n))
		executed = append(executed, float64(d.Commands-harnessCmds)/float64(n))
		reads = append(reads, float64(d.Reads-harnessReads)/float64(n))
		// Redis' CPU (INFO cpu) less the harness's goal writes
		// (calibrated); its event XREADs and INFOs stay in (a few µs).
		cpu = append(cpu, float64(d.CPU-int64(n)*goalCost.CPU)/float64(n))
		// The harness's own commands, so the breakdown is the daemons':
		// its goal scripts, its event watcher's XREADs and its INFOs.
		for k, v := range goalCost.Calls {
			d.Calls[k] -= int64(n) * v
		}
		for k, v := range goalCost.Usec {
			d.Usec[k] -= int64(n) * v
		}
		for _, k := range []string{"xread", "info"} {
			delete(d.Calls, k)
			delete(d.Usec, k)
		}
		redisTotal = redisTotal.add(d)
		claims += n
	}
	sfx, title := "1_agent", "1 agent"
	target, checks := "≤ 12", []Check{{Stat: StatP50, Value: 12}}
	if agents > 1 {
		sfx, title = fmt.Sprintf("%d_agents", agents), fmt.Sprintf("%d agents", agents)
		target, checks = "≤ 20", []Check{{Stat: StatP50, Value: 20}}
	}
	sampleOf := fmt.Sprintf("batches×%d claims", r.opts.RoundTripBatchClaims)
	f := NewFigure("round_trips_per_claim_"+sfx, "Redis round trips per claim, "+title, "round trips", sampleOf, rts, target, checks...)
	sort.Float64s(reads)
	f.Note = fmt.Sprintf("exact count of request/response turns on every daemon connection (a pipeline is one), by a proxy between each daemon and Redis, "+
		"in an untimed replay of the hop scenario; includes the daemons' background traffic during the batch; excludes the harness's goal write. "+
		"Cross-check from INFO total_reads_processed: median %s per claim; judged on the median batch", formatValue(Percentile(reads, 50)))
	r.add(f)
	f = NewFigure("commands_sent_per_claim_"+sfx, "Redis commands sent per claim, "+title, "commands", sampleOf, sent, "")
	f.Note = "commands the daemons sent (every command of a pipeline counts), parsed from the RESP by the same proxy; informational"
	r.add(f)
	f = NewFigure("redis_commands_per_claim_"+sfx, "Redis commands executed per claim, "+title, "commands", sampleOf, executed, "")
	f.Note = "INFO total_commands_processed delta less the harness's own: includes every command the Lua scripts run inside Redis; informational"
	r.add(f)
	r.report.Breakdowns = append(r.report.Breakdowns, shapeBreakdown(agents, perProc, claims), commandBreakdown(agents, redisTotal, claims),
		idleBreakdown(agents, idle, elapsed))
	return r.redisCPU(ctx, s, agents, cpu, redisTotal, claims, Percentile(sortedCopy(rts), 50), goalCost)
}

// redisCPU adds the Redis CPU per claim of the batches, its floor (the
// same commands replayed without scripts) and, from one extra batch with
// SLOWLOG at 0 µs, Redis' time per claim by script.
func (r *runner) redisCPU(ctx context.Context, s *stack, agents int, cpu []float64, total redisStats, claims int, rtPerClaim float64, goal redisStats) error {
	sfx, title := "1_agent", "1 agent"
	target, checks := "≤ 100 µs (issue 34)", []Check{{Stat: StatP50, Value: 100}}
	if agents > 1 {
		sfx, title = fmt.Sprintf("%d_agents", agents), fmt.Sprintf("%d agents", agents)
		target, checks = "", nil
	}
	perClaim := map[string]float64{}
	for k, v := range total.Calls {
		if v > 0 {
			perClaim[k] = float64(v) / float64(claims)
		}
	}
	var floor []float64
	var unknown []string
	for b := 0; b < r.opts.RoundTripBatches; b++ {
		var programs []floorProgram
		programs, unknown = buildFloorPrograms(perClaim, r.opts.RoundTripBatchClaims*5, int(math.Round(rtPerClaim)))
		v, err := runFloor(ctx, s.Raw, programs)
		if err != nil {
			return err
		}
		floor = append(floor, v)
	}
	sampleOf := fmt.Sprintf("batches×%d claims", r.opts.RoundTripBatchClaims)
	f := NewFigure("redis_cpu_per_claim_"+sfx, "Redis CPU per claim, "+title, "µs", sampleOf, cpu, target, checks...)
	fl := NewFigure("redis_cpu_floor_per_claim_"+sfx, "Redis CPU per claim, floor (same commands, no scripts), "+title, "µs",
		fmt.Sprintf("batches×%d claims", r.opts.RoundTripBatchClaims*5), floor, "")
	f.Note = fmt.Sprintf("INFO cpu used_cpu_sys+used_cpu_user delta over a batch of one-hop goals ÷ claims, less the harness's goal writes "+
		"(calibrated: %.0f µs each; the harness's event XREADs stay in); daemons on loopback TCP through the counting proxies. "+
		"%.1f× the floor (p50 %s µs)", float64(goal.CPU), f.P50/fl.P50, formatValue(fl.P50))
	fl.Note = fmt.Sprintf("the commands a claim makes Redis run (INFO commandstats per claim, script-internal ones included, EVALSHA left out) "+
		"replayed as plain commands with representative arguments, in %d pipelines per claim (the daemons' round trips), from one client over TCP", max(int(math.Round(rtPerClaim)), 1))
	if len(unknown) > 0 {
		fl.Note += "; not replayed: " + strings.Join(unknown, ", ")
	}
	r.add(f)
	r.add(fl)
	// Per script: one extra batch with every command's time logged.
	if err := startRedisTimeLog(ctx, s.Raw); err != nil {
		return err
	}
	n := r.opts.RoundTripBatchClaims
	for i := 0; i < n; i++ {
		if _, _, _, err := s.RunGoal(ctx, "script time"); err != nil {
			return err
		}
	}
	b, err := redisTimeBreakdown(ctx, s.Raw, r.scriptNames, n)
	if err != nil {
		return err
	}
	b.Name = "redis_time_claim_" + sfx
	b.Title = fmt.Sprintf("Redis execution time per claim by script and command, %s: one extra batch of %d one-hop goals with SLOWLOG at 0 µs (the harness's goal write included: one create_artefact per claim; wall time inside Redis; a script's row includes the commands it runs)", title, n)
	r.report.Breakdowns = append(r.report.Breakdowns, b)
	return nil
}

func sortedCopy(v []float64) []float64 {
	out := append([]float64(nil), v...)
	sort.Float64s(out)
	return out
}

// goalCommands measures what one goal write makes Redis execute (the
// EVALSHA and every command its script runs), per command, in a scratch
// instance no daemon watches.
func (r *runner) goalCommands(ctx context.Context, s *stack) (redisStats, error) {
	scratch, err := blackboard.New(ctx, s.Raw, blackboard.Options{Instance: s.Instance + "-calibration"})
	if err != nil {
		return redisStats{}, err
	}
	const n = 20
	st0, err := readRedisStats(ctx, s.Raw)
	if err != nil {
		return redisStats{}, err
	}
	for i := 0; i < n; i++ {
		if err := scratch.CreateArtefact(ctx, blackboard.NewGoal("calibration", 0, "user", nil), blackboard.WriteAuth{}); err != nil {
			return redisStats{}, err
		}
	}
	st1, err := readRedisStats(ctx, s.Raw)
	if err != nil {
		return redisStats{}, err
	}
	// The first INFO is counted in the delta; an idle daemon's heartbeat
	// may be too, once: rounding to whole commands per goal drops both.
	d := st1.Sub(st0)
	per := redisStats{Calls: map[string]int64{}, Usec: map[string]int64{}, CPU: d.CPU / n}
	for k, v := range d.Calls {
		if q := (v + n/2) / n; q > 0 && k != "info" {
			per.Calls[k] = q
			per.Commands += q
			per.Usec[k] = d.Usec[k] / n
		}
	}
	return per, nil
}

func (s redisStats) add(o redisStats) redisStats {
	out := redisStats{Commands: s.Commands + o.Commands, Reads: s.Reads + o.Reads, CPU: s.CPU + o.CPU, Calls: map[string]int64{}, Usec: map[string]int64{}}
	for k, v := range s.Calls {
		out.Calls[k] += v
	}
	for k, v := range o.Calls {
		out.Calls[k] += v
	}
	for k, v := range s.Usec {
		out.Usec[k] += v
	}
	for k, v := range o.Usec {
		out.Usec[k] += v
	}
	return out
}

// shapeBreakdown lists, per daemon, its round trips per claim by shape.
func shapeBreakdown(agents int, perProc map[string]ProxyCounts, claims int) Breakdown {
	b := Breakdown{Name: fmt.Sprintf("round_trips_%d", agents),
		Title:   fmt.Sprintf("Round trips per claim by daemon and request, %d agent(s) (proxy counts over %d claims)", agents, claims),
		Columns: []string{"DAEMON", "REQUEST (commands in one round trip)", "PER CLAIM"}}
	names := make([]string, 0, len(perProc))
	for n := range perProc {
		names = append(names, n)
	}
	sort.Strings(names)
	per := func(n int64) string { return strconv.FormatFloat(float64(n)/float64(claims), 'f', 2, 64) }
	for _, name := range names {
		c := perProc[name]
		b.Rows = append(b.Rows, []string{name, fmt.Sprintf("all (%s commands sent)", per(c.Commands)), per(c.RoundTrips)})
		for _, shape := range topShapes(c.Shapes) {
			b.Rows = append(b.Rows, []string{"", shape, per(c.Shapes[shape])})
		}
	}
	return b
}

// idleBreakdown lists, per daemon, its round trips per second by shape on
// an idle stack.
func idleBreakdown(agents int, perProc map[string]ProxyCounts, window time.Duration) Breakdown {
	b := Breakdown{Name: fmt.Sprintf("idle_round_trips_%d", agents),
		Title:   fmt.Sprintf("Idle round trips per second by daemon and request, %d agent(s) (proxy counts over %s, no work)", agents, window.Round(time.Millisecond)),
		Columns: []string{"DAEMON", "REQUEST", "PER SECOND"}}
	names := make([]string, 0, len(perProc))
	for n := range perProc {
		names = append(names, n)
	}
	sort.Strings(names)
	per := func(n int64) string { return strconv.FormatFloat(float64(n)/window.Seconds(), 'f', 2, 64) }
	for _, name := range names {
		c := perProc[name]
		b.Rows = append(b.Rows, []string{name, "all", per(c.RoundTrips)})
		for _, shape := range topShapes(c.Shapes) {
			b.Rows = append(b.Rows, []string{"", shape, per(c.Shapes[shape])})
		}
	}
	return b
}

// commandBreakdown lists Redis' commandstats per claim, scripts' inner
// commands included.
func commandBreakdown(agents int, st redisStats, claims int) Breakdown {
	b := Breakdown{Name: fmt.Sprintf("redis_commands_%d", agents),
		Title:   fmt.Sprintf("Commands Redis executed per claim, %d agent(s) (INFO commandstats: commands run by Lua scripts included; the harness's goal scripts, XREADs and INFOs taken out)", agents),
		Columns: []string{"COMMAND", "PER CLAIM", "µs PER CLAIM (commandstats)"}}
	names := make([]string, 0, len(st.Calls))
	for n, v := range st.Calls {
		if v > 0 {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if st.Calls[names[i]] != st.Calls[names[j]] {
			return st.Calls[names[i]] > st.Calls[names[j]]
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		b.Rows = append(b.Rows, []string{strings.ToUpper(n), strconv.FormatFloat(float64(st.Calls[n])/float64(claims), 'f', 2, 64),
			formatValue(float64(st.Usec[n]) / float64(claims))})
	}
	return b
}
