package bench

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// Artefact types the no-op tools write.
const (
	noopType   = "BenchNoop"
	reviewType = "BenchReview"
	draftType  = "Draft"
)

// noopAgents are n exclusive bidders on goals whose no-op tool writes a
// Terminal artefact: each goal is exactly one hop, and with n > 1 every
// agent bids and noop-1 (the lowest name) wins.
func noopAgents(n, maxConcurrent int) []agentSpec {
	out := make([]agentSpec, n)
	for i := range out {
		out[i] = agentSpec{name: fmt.Sprintf("noop-%d", i+1), mode: "terminal", typ: noopType,
			strategy: "exclusive", consumes: []string{blackboard.GoalType}, maxConcurrent: maxConcurrent}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// hopStages are the parts of a hop, measured from arrivals on the event
// stream (each late by one delivery) and the tool's own start time.
var hopStages = []string{
	"goal written → claim_created (orchestrator: read event, create claim + bid requests)",
	"claim_created → last bid_submitted (cubs: read inbox, bid; 0 when the rules decide the bids)",
	"last bid → claim_granted (the last bid's script, or the orchestrator: read bid event, load state, grant; 0 when the creating script grants)",
	"claim_granted → tool main() (cub: read grant, lease, load, spawn)",
	"tool main() → output artefact_created (tool runs; cub parses, writes)",
	"output written → workflow_completed (the result's script, or the orchestrator, completes the claim)",
}

// runHops times opts.HopSamples hops (after the warm-up) on a stack of
// noop agents: from the moment the harness's goal write returned to the
// moment the winning no-op tool's main() began, both on the host clock.
func (r *runner) runHops(ctx context.Context, s *stack, agents int) (Figure, Breakdown, error) {
	var hops []float64
	stages := make([][]float64, len(hopStages))
	for i := 0; i < r.opts.HopWarmup+r.opts.HopSamples; i++ {
		id, written, _, err := s.RunGoal(ctx, fmt.Sprintf("hop %d", i))
		if err != nil {
			return Figure{}, Breakdown{}, err
		}
		tl, err := readHopTimeline(ctx, s, id)
		if err != nil {
			return Figure{}, Breakdown{}, err
		}
		if i < r.opts.HopWarmup {
			continue
		}
		if want := s.bidders(agents); tl.bids != want {
			return Figure{}, Breakdown{}, fmt.Errorf("bench: workflow %s got %d bids, want %d", id, tl.bids, want)
		}
		hops = append(hops, ms(tl.toolStart.Sub(written)))
		for j, d := range []time.Duration{
			tl.claimCreated.Sub(written), tl.lastBid.Sub(tl.claimCreated), tl.granted.Sub(tl.lastBid),
			tl.toolStart.Sub(tl.granted), tl.output.Sub(tl.toolStart), tl.completed.Sub(tl.output),
		} {
			stages[j] = append(stages[j], ms(d))
		}
	}
	name, title, target := "hop_1_agent", "hop overhead, 1 agent", "p50 ≤ 5 ms, p99 ≤ 25 ms"
	checks := []Check{{Stat: StatP50, Value: 5}, {Stat: StatP99, Value: 25}}
	if agents > 1 {
		name, title, target = fmt.Sprintf("hop_%d_agents", agents), fmt.Sprintf("hop overhead, %d agents bidding", agents), "p50 ≤ 8 ms"
		checks = []Check{{Stat: StatP50, Value: 8}}
	}
	f := NewFigure(name, title, "ms", "hops", hops, target, checks...)
	f.Note = "goal CreateArtefact returned (harness clock) → no-op tool's main() began (time.Now() in the tool, same host clock); sequential goals, each one hop (the tool writes a Terminal artefact)"
	return f, stageBreakdown("hop_stages_"+strconv.Itoa(agents), fmt.Sprintf("Hop stages, %d agent(s) (ms; stream arrivals, each late by one delivery)", agents), hopStages, stages), nil
}

// hopTimeline is when each step of a one-hop workflow was seen.
type hopTimeline struct {
	claimCreated, lastBid, granted, toolStart, output, completed time.Time
	bids                                                         int
}

func readHopTimeline(ctx context.Context, s *stack, wf string) (hopTimeline, error) {
	var tl hopTimeline
	var outputID string
	for _, e := range s.Watcher.Events(wf) {
		switch e.Type {
		case blackboard.EventClaimCreated:
			tl.claimCreated = e.At
		case blackboard.EventBidSubmitted:
			tl.bids++
			if e.At.After(tl.lastBid) {
				tl.lastBid = e.At
			}
		case blackboard.EventClaimGranted:
			tl.granted = e.At
		case blackboard.EventArtefactCreated:
			if e.Field("type") == noopType {
				tl.output, outputID = e.At, e.ArtefactID
			}
		case blackboard.EventWorkflowCompleted:
			tl.completed = e.At
		}
	}
	if outputID == "" || tl.claimCreated.IsZero() || tl.granted.IsZero() {
		return tl, fmt.Errorf("bench: workflow %s did not run one no-op hop (output %q)", wf, outputID)
	}
	if tl.bids == 0 {
		tl.lastBid = tl.claimCreated // nobody asked: the rules decided the bids
	}
	start, err := toolStart(ctx, s, outputID)
	if err != nil {
		return tl, err
	}
	tl.toolStart = start
	return tl, nil
}

// toolStart reads the start time a no-op tool wrote into its payload.
func toolStart(ctx context.Context, s *stack, artefactID string) (time.Time, error) {
	a, err := s.BB.GetArtefact(ctx, artefactID)
	if err != nil {
		return time.Time{}, err
	}
	ns, err := strconv.ParseInt(a.Payload, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("bench: no-op output %s has payload %q, not a start time", artefactID, a.Payload)
	}
	return time.Unix(0, ns), nil
}

// stageBreakdown tabulates stage durations with their percentiles.
func stageBreakdown(name, title string, labels []string, values [][]float64) Breakdown {
	b := Breakdown{Name: name, Title: title, Columns: []string{"STAGE", "N", "P50", "P90", "P99"}}
	for i, label := range labels {
		v := append([]float64(nil), values[i]...)
		sort.Float64s(v)
		b.Rows = append(b.Rows, []string{label, strconv.Itoa(len(v)), formatValue(Percentile(v, 50)),
			formatValue(Percentile(v, 90)), formatValue(Percentile(v, 99))})
	}
	return b
}

func (r *runner) hop1(ctx context.Context) error {
	s, err := r.startStack(ctx, stackSpec{name: "hop-1", agents: noopAgents(1, 0)})
	if err != nil {
		return err
	}
	defer s.Close()
	f, b, err := r.runHops(ctx, s, 1)
	if err != nil {
		return err
	}
	r.add(f)
	r.report.Breakdowns = append(r.report.Breakdowns, b)
	return r.outsideView(ctx, s)
}

// endToEnd times goal → review (approved with {}) → exclusive (Terminal)
// → workflow_completed, all on one claim.
func (r *runner) endToEnd(ctx context.Context) error {
	s, err := r.startStack(ctx, stackSpec{name: "e2e", agents: []agentSpec{
		{name: "reviewer", mode: "review-approve", typ: reviewType, strategy: "review", consumes: []string{blackboard.GoalType}},
		{name: "worker", mode: "terminal", typ: noopType, strategy: "exclusive", consumes: []string{blackboard.GoalType}},
	}})
	if err != nil {
		return err
	}
	defer s.Close()
	var samples []float64
	for i := 0; i < r.opts.HopWarmup+r.opts.EndToEndSamples; i++ {
		id, written, end, err := s.RunGoal(ctx, fmt.Sprintf("end to end %d", i))
		if err != nil {
			return err
		}
		var approved, output bool
		for _, e := range s.Watcher.Events(id) {
			approved = approved || e.Type == blackboard.EventReviewApproved
			output = output || e.Type == blackboard.EventArtefactCreated && e.Field("type") == noopType
		}
		if !approved || !output {
			return fmt.Errorf("bench: workflow %s did not run review → exclusive (approved %t, output %t)", id, approved, output)
		}
		if i >= r.opts.HopWarmup {
			samples = append(samples, ms(end.At.Sub(written)))
		}
	}
	f := NewFigure("end_to_end_review_exclusive", "end to end: goal → review → exclusive → completed", "ms", "workflows", samples, "")
	f.Note = "goal CreateArtefact returned → workflow_completed received by a blocking XREAD of the event stream; reviewer no-op approves with {}, exclusive no-op writes a Terminal artefact; no target (informational)"
	r.add(f)
	return nil
}

// feedback times the creation of the feedback claim after the last of
// three rejecting reviews of a Draft v1.
func (r *runner) feedback(ctx context.Context) error {
	agents := []agentSpec{{name: "author", mode: "standard", typ: draftType, strategy: "exclusive", consumes: []string{blackboard.GoalType}}}
	for i := 1; i <= 3; i++ {
		agents = append(agents, agentSpec{name: fmt.Sprintf("reviewer-%d", i), mode: "review-reject-v1", typ: reviewType,
			strategy: "review", consumes: []string{draftType}})
	}
	s, err := r.startStack(ctx, stackSpec{name: "feedback", agents: agents})
	if err != nil {
		return err
	}
	defer s.Close()
	var samples, serverMs []float64
	for i := 0; i < r.opts.HopWarmup/2+r.opts.FeedbackSamples; i++ {
		id, _, _, err := s.RunGoal(ctx, fmt.Sprintf("feedback %d", i))
		if err != nil {
			return err
		}
		events := s.Watcher.Events(id)
		var fb *observedEvent
		for j := range events {
			if events[j].Type == blackboard.EventFeedbackClaimCreated {
				fb = &events[j]
			}
		}
		if fb == nil {
			return fmt.Errorf("bench: workflow %s created no feedback claim", id)
		}
		parent := fb.Field("parent_claim_id")
		var last *observedEvent
		reviews := 0
		for j := range events {
			e := &events[j]
			if e.Type == blackboard.EventArtefactCreated && e.ClaimID == parent && e.Field("structural_type") == string(blackboard.StructuralReview) {
				reviews++
				if last == nil || e.At.After(last.At) || e.At.Equal(last.At) && e.StreamID > last.StreamID {
					last = e
				}
			}
		}
		if reviews != 3 {
			return fmt.Errorf("bench: claim %s got %d reviews before its feedback claim, want 3", parent, reviews)
		}
		if i >= r.opts.HopWarmup/2 {
			samples = append(samples, ms(fb.At.Sub(last.At)))
			serverMs = append(serverMs, float64(fb.TsMs-last.TsMs))
		}
	}
	sort.Float64s(serverMs)
	f := NewFigure("feedback_claim_after_last_review", "feedback claim created after the last (3rd) rejecting review", "ms", "rejections", samples, "")
	f.Note = fmt.Sprintf("arrival of the last Review's artefact_created → arrival of feedback_claim_created, both on one blocking XREAD of the event stream; "+
		"Redis-clock cross-check (event ts, 1 ms resolution): p50 %s ms, max %s ms; no target (informational)",
		formatValue(Percentile(serverMs, 50)), formatValue(Percentile(serverMs, 100)))
	r.add(f)
	return nil
}
