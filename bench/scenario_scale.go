package bench

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
)

// How cost grows (issue 34): the hop and the throughput of a fresh goal
// while N workflows are in flight, and while M agents are alive, each
// printed as a curve (one row per N or M).

// parkedType is the type of the root artefacts that park the in-flight
// workflows: the scale stack's sett.yml gates it behind approvals, so the
// orchestrator gives each one a claim pending approval — a workflow in
// flight, waiting for a human, as real parked workflows wait.
const parkedType = "BenchParked"

// scaleHopBudget bounds the time spent timing hops at one level: the
// sample count is ScaleHops or what fits in it, whichever is smaller.
const scaleHopBudget = 8 * time.Second

// scaleLevel is what one level of a curve measured.
type scaleLevel struct {
	hops     []float64
	rate     float64
	claims   int
	stats    redisStats // over the hops
	hopCount int
}

// scaleInFlight parks N workflows on approvals, for each N of
// ScaleInFlight in turn (the parked ones stay: each level adds to the
// last), and times hops and one throughput round of a fresh goal's
// workflow at each.
func (r *runner) scaleInFlight(ctx context.Context) error {
	extra := "approvals: {artefact_types: [" + parkedType + "], timeout: 0s}\n"
	s, err := r.startStack(ctx, stackSpec{name: "scale-inflight", agents: noopAgents(1, r.opts.ThroughputMaxConcurrent), extra: extra})
	if err != nil {
		return err
	}
	defer s.Close()
	for i := 0; i < r.opts.HopWarmup; i++ {
		if _, _, _, err := s.RunGoal(ctx, "warm-up"); err != nil {
			return err
		}
	}
	levels := map[int]scaleLevel{}
	parked := 0
	var memPer, evNotes []string
	for _, n := range r.opts.ScaleInFlight {
		if n > parked {
			mem0, err := usedMemory(ctx, s.Raw)
			if err != nil {
				return err
			}
			t := time.Now()
			if err := parkWorkflows(ctx, s, parked, n); err != nil {
				return err
			}
			r.progress("scale: %d workflows parked on approvals in %s", n, time.Since(t).Round(time.Millisecond))
			mem, err := usedMemory(ctx, s.Raw)
			if err != nil {
				return err
			}
			memPer = append(memPer, fmt.Sprintf("%d → %d in flight: %.0f B each", parked, n, float64(mem-mem0)/float64(n-parked)))
			parked = n
		}
		e0, err := eventLog(ctx, s)
		if err != nil {
			return err
		}
		lv, err := r.scaleLevel(ctx, s, s.bidders(1))
		if err != nil {
			return fmt.Errorf("%d in flight: %w", n, err)
		}
		levels[n] = lv
		e1, err := eventLog(ctx, s)
		if err != nil {
			return err
		}
		goals := lv.hopCount + r.opts.ScaleGoals
		evNotes = append(evNotes, fmt.Sprintf("%d in flight: %.1f entries and %.0f bytes per one-hop workflow, %.0f bytes per entry",
			n, float64(e1.entries-e0.entries)/float64(goals), float64(e1.bytes-e0.bytes)/float64(goals), float64(e1.bytes)/float64(max(e1.entries, 1))))
	}
	r.note("scale: the events stream (the audit log `sett watch` replays), MEMORY USAGE and XLEN around each level's goals: %s", strings.Join(evNotes, "; "))
	r.addScaleCurve("inflight", "workflows in flight", r.opts.ScaleInFlight, levels,
		"a fresh goal's one-hop workflow on a stack of one agent (max_concurrent %d) while N workflows are parked on approvals "+
			"(root artefacts of a gated type: the orchestrator gave each a claim pending approval)")
	r.note("scale: Redis used_memory per parked workflow (root artefact, workflow, claim pending approval, events): %s", strings.Join(memPer, "; "))
	return nil
}

// scaleAgents times hops and one throughput round with M agents alive,
// for each M of ScaleAgents: M cubs, every one exclusive on goals by its
// rules, the lowest name winning — once with every agent asked to bid
// (decide_rule_bids: false), once with the bids their rules decide
// recorded by the orchestrator (the default).
func (r *runner) scaleAgents(ctx context.Context) error {
	if err := r.scaleAgentsCurve(ctx, "agents", "agents alive, all asked to bid", true); err != nil {
		return err
	}
	return r.scaleAgentsCurve(ctx, "agents_decided", "agents alive, rule bids decided", false)
}

// scaleAgentsCurve is one agents curve; ask sets
// orchestrator.decide_rule_bids: false, so that every agent is asked and
// answers with its own bid.
func (r *runner) scaleAgentsCurve(ctx context.Context, key, what string, ask bool) error {
	levels := map[int]scaleLevel{}
	for _, m := range r.opts.ScaleAgents {
		t := time.Now()
		agents := noopAgents(m, r.opts.ThroughputMaxConcurrent)
		for i := range agents {
			agents[i].name = fmt.Sprintf("noop-%03d", i+1) // noop-001 sorts first, wins
		}
		s, err := r.startStack(ctx, stackSpec{name: fmt.Sprintf("scale-%s-%d", strings.ReplaceAll(key, "_", "-"), m), agents: agents, askRuleBids: ask})
		if err != nil {
			return err
		}
		r.progress("scale: %d agents ready in %s", m, time.Since(t).Round(time.Millisecond))
		lv, err := func() (scaleLevel, error) {
			defer s.Close()
			for i := 0; i < r.opts.HopWarmup; i++ {
				if _, _, _, err := s.RunGoal(ctx, "warm-up"); err != nil {
					return scaleLevel{}, err
				}
			}
			return r.scaleLevel(ctx, s, s.bidders(m))
		}()
		if err != nil {
			return fmt.Errorf("%d agents: %w", m, err)
		}
		levels[m] = lv
	}
	how := "a fresh goal's one-hop workflow with M agents alive (exclusive on goals, max_concurrent %d) and orchestrator.decide_rule_bids: false: each agent is its own cub answering bid requests from its rules, the lowest name winning"
	if !ask {
		how = "a fresh goal's one-hop workflow with M agents alive (exclusive on goals, max_concurrent %d), orchestrator.decide_rule_bids at its default (true): the orchestrator records their rule bids at claim creation and grants the lowest name; no agent is asked"
	}
	r.addScaleCurve(key, what, r.opts.ScaleAgents, levels, how)
	return nil
}

// scaleLevel times hops (ScaleHops, or what fits in scaleHopBudget) with
// Redis' statistics around them, then one throughput round of ScaleGoals.
func (r *runner) scaleLevel(ctx context.Context, s *stack, bidders int) (scaleLevel, error) {
	var lv scaleLevel
	st0, err := readRedisStats(ctx, s.Raw)
	if err != nil {
		return lv, err
	}
	deadline := time.Now().Add(scaleHopBudget)
	for i := 0; i < r.opts.ScaleHops && (i < 3 || time.Now().Before(deadline)); i++ {
		id, written, _, err := s.RunGoal(ctx, fmt.Sprintf("scale hop %d", i))
		if err != nil {
			return lv, err
		}
		tl, err := readHopTimeline(ctx, s, id)
		if err != nil {
			return lv, err
		}
		if tl.bids != bidders {
			return lv, fmt.Errorf("bench: workflow %s got %d bids, want %d", id, tl.bids, bidders)
		}
		lv.hops = append(lv.hops, ms(tl.toolStart.Sub(written)))
	}
	st1, err := readRedisStats(ctx, s.Raw)
	if err != nil {
		return lv, err
	}
	lv.stats, lv.hopCount = st1.Sub(st0), len(lv.hops)
	lv.rate, lv.claims, err = r.throughputRound(ctx, s, r.opts.ScaleGoals, "scale")
	return lv, err
}

// addScaleCurve adds, per level, the hop figure and the throughput
// figure, and the breakdown of Redis' cost per claim across the levels
// (what grows with the level shows there).
func (r *runner) addScaleCurve(key, what string, ns []int, levels map[int]scaleLevel, how string) {
	how = fmt.Sprintf(how, r.opts.ThroughputMaxConcurrent)
	base := levels[ns[0]]
	for _, n := range ns {
		lv := levels[n]
		f := NewFigure(fmt.Sprintf("scale_hop_%s_%d", key, n), fmt.Sprintf("hop, %s %s", formatCount(n), what), "ms", "hops", lv.hops, "")
		f.Note = how + fmt.Sprintf("; goal write returned → tool main(); up to %d hops or %s", r.opts.ScaleHops, scaleHopBudget)
		if n != ns[0] && len(base.hops) > 0 {
			bf := NewFigure("", "", "", "", base.hops, "")
			f.Note += fmt.Sprintf("; p50 %.2f× the %s level's", f.P50/bf.P50, formatCount(ns[0]))
		}
		r.add(f)
		t := NewFigure(fmt.Sprintf("scale_throughput_%s_%d", key, n), fmt.Sprintf("throughput, %s %s", formatCount(n), what), "claims/s",
			fmt.Sprintf("round (%d claims)", lv.claims), []float64{lv.rate}, "")
		t.Note = how + fmt.Sprintf("; one round of %d goals posted at once", r.opts.ScaleGoals)
		if n != ns[0] && base.rate > 0 {
			t.Note += fmt.Sprintf("; %.2f× the %s level's", lv.rate/base.rate, formatCount(ns[0]))
		}
		r.add(t)
		c := NewFigure(fmt.Sprintf("scale_redis_cpu_%s_%d", key, n), fmt.Sprintf("Redis CPU per goal, %s %s", formatCount(n), what), "µs",
			"hop phase", []float64{float64(lv.stats.CPU) / float64(max(lv.hopCount, 1))}, "")
		c.Note = "INFO cpu delta over the timed hops ÷ goals, the goal write and the harness's reads included"
		r.add(c)
	}
	r.report.Breakdowns = append(r.report.Breakdowns, scaleBreakdown(key, what, ns, levels))
}

// scaleBreakdown is INFO commandstats per goal at every level: calls and
// Redis µs, for the commands whose cost changed most between the first
// and the last level.
func scaleBreakdown(key, what string, ns []int, levels map[int]scaleLevel) Breakdown {
	b := Breakdown{Name: "scale_commands_" + key,
		Title: fmt.Sprintf("Redis commands per goal by %s (INFO commandstats over the timed hops ÷ goals, the harness's goal write and XREADs included): calls / µs", what)}
	b.Columns = []string{"COMMAND"}
	for _, n := range ns {
		b.Columns = append(b.Columns, formatCount(n))
	}
	first, last := levels[ns[0]], levels[ns[len(ns)-1]]
	per := func(lv scaleLevel, m map[string]int64, cmd string) float64 {
		return float64(m[cmd]) / float64(max(lv.hopCount, 1))
	}
	names := map[string]bool{}
	for _, n := range ns {
		for c := range levels[n].stats.Calls {
			if c != "info" {
				names[c] = true
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for c := range names {
		sorted = append(sorted, c)
	}
	growth := func(c string) float64 { return per(last, last.stats.Usec, c) - per(first, first.stats.Usec, c) }
	sort.Slice(sorted, func(i, j int) bool { return growth(sorted[i]) > growth(sorted[j]) })
	for _, c := range sorted {
		row := []string{strings.ToUpper(c)}
		for _, n := range ns {
			lv := levels[n]
			row = append(row, formatValue(per(lv, lv.stats.Calls, c))+" / "+formatValue(per(lv, lv.stats.Usec, c)))
		}
		b.Rows = append(b.Rows, row)
	}
	row := []string{"Redis CPU µs (INFO cpu)"}
	for _, n := range ns {
		lv := levels[n]
		row = append(row, formatValue(float64(lv.stats.CPU)/float64(max(lv.hopCount, 1))))
	}
	b.Rows = append(b.Rows, row)
	return b
}

// parkWorkflows writes the root artefacts from..to-1 of the gated type
// (16 writers) and waits until the orchestrator has given every one its
// claim pending approval.
func parkWorkflows(ctx context.Context, s *stack, from, to int) error {
	const writers = 16
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := from + w; i < to; i += writers {
				a := blackboard.NewGoal("parked "+strconv.Itoa(i), 0, "user", nil)
				a.Type = parkedType
				if err := s.BB.CreateArtefact(ctx, a, blackboard.WriteAuth{}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, err := s.BB.CountApprovals(ctx)
		if err != nil {
			return err
		}
		if n >= int64(to) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d of %d parked workflows have their approval claim after 2m (stack %s, logs in %s)", n, to, s.Name, s.Dir)
		}
		if err := wait(ctx, 50*time.Millisecond); err != nil { // polling a count, with a deadline
			return err
		}
	}
}

type eventLogSize struct{ entries, bytes int64 }

// eventLog reads the length and the memory of the events stream.
func eventLog(ctx context.Context, s *stack) (eventLogSize, error) {
	key := "sett:" + s.Instance + ":events"
	n, err := s.Raw.XLen(ctx, key).Result()
	if err != nil {
		return eventLogSize{}, fmt.Errorf("bench: XLEN %s: %w", key, err)
	}
	b, err := s.Raw.MemoryUsage(ctx, key, 0).Result() // SAMPLES 0: every node
	if err != nil {
		return eventLogSize{}, fmt.Errorf("bench: MEMORY USAGE %s: %w", key, err)
	}
	return eventLogSize{n, b}, nil
}

// usedMemory is INFO memory used_memory, in bytes.
func usedMemory(ctx context.Context, rdb *redis.Client) (int64, error) {
	text, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("bench: INFO memory: %w", err)
	}
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("bench: INFO memory has no used_memory")
}

// formatCount prints 10000 as "10 000".
func formatCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}
