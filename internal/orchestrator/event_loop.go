package orchestrator

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
)

// consumerGroup is the orchestrators' consumer group on the event stream.
// Every orchestrator uses the same consumer name, so a new leader inherits
// the unacknowledged events of the previous one.
const (
	consumerGroup = "orchestrator"
	consumerName  = "orchestrator"
)

// EventLoop reads the orchestrator's durable queue (the events it acts on,
// appended by the same scripts that write the audit stream) through a
// consumer group and dispatches each event's handlers. An event is acknowledged only after
// all its handlers succeeded, and the acknowledgement rides on the next
// read; unacknowledged events are handled again by the periodic sweep and
// after a restart. Handlers are idempotent, so a repeat is harmless.
type EventLoop struct {
	bb       *blackboard.Client
	disp     *Dispatcher
	creator  *ClaimCreator
	advancer *ClaimAdvancer
	dir      *AgentDirectory
	m        *Metrics
	log      zerolog.Logger
	cfg      EventLoopConfig

	mu   sync.Mutex
	acks []string
	// dead counts each entry's failed handlings and sets aside those that
	// fail DeadLetterAfter times (see dead_letters.go).
	dead deadLetters

	// EscalateFunc hands a workflow_escalated event to the escalation
	// hook; it must not block (the hook runs on its own).
	EscalateFunc func(ctx context.Context, event any) bool
}

// EventLoopParams is what NewEventLoop wires together.
type EventLoopParams struct {
	Client     *blackboard.Client
	Config     EventLoopConfig
	Dispatcher *Dispatcher
	Creator    *ClaimCreator
	Advancer   *ClaimAdvancer
	Directory  *AgentDirectory
	Metrics    *Metrics
	// Log has no component; the loop adds its own.
	Log zerolog.Logger
}

// NewEventLoop wires the loop.
func NewEventLoop(p EventLoopParams) *EventLoop {
	return &EventLoop{bb: p.Client, disp: p.Dispatcher, creator: p.Creator, advancer: p.Advancer, dir: p.Directory, m: p.Metrics,
		log: p.Log.With().Str("component", "event_loop").Logger(), cfg: p.Config}
}

// Run reads and dispatches events until ctx ends.
func (l *EventLoop) Run(ctx context.Context) error {
	ec, err := l.bb.QueueConsumer(ctx, consumerGroup, consumerName)
	if err != nil {
		return err
	}
	l.dead.init(ec, l.cfg.DeadLetterAfter, l.log)
	if err := l.handlePending(ctx, ec); err != nil {
		return err
	}
	lastSweep := time.Now()
	for ctx.Err() == nil {
		// A read failed or a connection broke while it ran, so Redis may
		// have delivered entries to this consumer whose reply went
		// nowhere (a partition dropping what Redis sends, a connection
		// cut while the read blocked); a read of new entries never
		// returns them. They are read back from the pending list as soon
		// as Redis answers, not at the next sweep.
		// A failed read back leaves the report set for the next turn
		// (the read below fails too, and says so).
		if ec.LostReplies() {
			_ = l.handlePending(ctx, ec)
		}
		acks := l.takeAcks()
		events, err := ec.Next(ctx, acks, 256, blackboard.MaxPipelinedBlock)
		if err != nil {
			// The acknowledgements may not have reached Redis: they go
			// again with the next read (acknowledging twice is harmless).
			l.requeueAcks(acks)
			if ctx.Err() != nil {
				break
			}
			l.log.Warn().Err(err).Msg("reading events failed; retrying")
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		for _, ev := range events {
			l.dispatch(ctx, ev)
		}
		if time.Since(lastSweep) >= l.cfg.Sweep {
			lastSweep = time.Now()
			if err := l.handlePending(ctx, ec); err != nil && ctx.Err() == nil {
				l.log.Warn().Err(err).Msg("sweep of unacknowledged events failed")
			}
		}
	}
	// Flush acknowledgements of work that finished; anything unfinished is
	// handled again by the next leader.
	_ = ec.Ack(context.WithoutCancel(ctx), l.takeAcks()...)
	return nil
}

// handlePending re-dispatches every event delivered to this consumer but
// not acknowledged (handlers are idempotent).
func (l *EventLoop) handlePending(ctx context.Context, ec *blackboard.EventConsumer) error {
	// Acknowledgements ride on the next read, which may block for up to
	// MaxPipelinedBlock: send those waiting first, or entries already
	// handled would be handled (and logged) again.
	if acks := l.takeAcks(); len(acks) > 0 {
		if err := ec.Ack(ctx, acks...); err != nil {
			l.requeueAcks(acks)
			return err
		}
	}
	events, err := ec.Pending(ctx, 10000)
	if err != nil {
		return err
	}
	if len(events) > 0 {
		l.log.Info().Int("events", len(events)).Msg("handling unacknowledged events")
	}
	for _, ev := range events {
		l.dispatch(ctx, ev)
	}
	return nil
}

// requeueAcks puts back acknowledgements whose sending failed.
func (l *EventLoop) requeueAcks(acks []string) {
	if len(acks) == 0 {
		return
	}
	l.mu.Lock()
	l.acks = append(acks, l.acks...)
	l.mu.Unlock()
}

func (l *EventLoop) takeAcks() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	acks := l.acks
	l.acks = nil
	return acks
}

// tracker acknowledges an event once every task it spawned succeeded.
type tracker struct {
	loop    *EventLoop
	id      string
	ev      blackboard.Event
	lastErr atomic.Value // error
	pending atomic.Int32
	failed  atomic.Bool
}

func (t *tracker) done(err error) {
	if err != nil {
		t.failed.Store(true)
		t.lastErr.Store(err)
	}
	if t.pending.Add(-1) != 0 {
		return
	}
	if !t.failed.Load() {
		t.loop.dead.forget(t.id)
		t.loop.mu.Lock()
		t.loop.acks = append(t.loop.acks, t.id)
		t.loop.mu.Unlock()
		return
	}
	err, _ = t.lastErr.Load().(error)
	t.loop.dead.failed(t.ev, err)
}

// dispatch routes one event to its handlers.
func (l *EventLoop) dispatch(ctx context.Context, ev blackboard.Event) {
	l.m.Events.WithLabelValues(string(ev.Type)).Inc()
	if ev.TsMs > 0 {
		l.m.EventLag.Observe(msToSeconds(time.Now().UnixMilli() - ev.TsMs))
	}
	var tasks []struct {
		key string
		run func(context.Context) error
	}
	add := func(key string, run func(context.Context) error) {
		tasks = append(tasks, struct {
			key string
			run func(context.Context) error
		}{key, run})
	}
	switch ev.Type {
	case blackboard.EventArtefactCreated:
		if ev.ClaimID != "" {
			add(ev.ClaimID, func(ctx context.Context) error { return l.advancer.AdvanceResult(ctx, ev) })
		}
		if blackboard.StructuralType(ev.Field("structural_type")).Claimable() {
			add(ev.ArtefactID, func(ctx context.Context) error { return l.creator.OnArtefact(ctx, ev) })
		}
	case blackboard.EventApprovalDecided, blackboard.EventClaimRetried:
		add(ev.ClaimID, func(ctx context.Context) error { return l.advancer.Advance(ctx, ev.ClaimID, ev.WorkflowID, false) })
	case blackboard.EventClaimCompletedByResult:
		l.advancer.CompletedByResult(ev)
		if ev.Field("ended") == "due" {
			// The result's script closed the last open item but its
			// cub's Redis user may not end a workflow.
			add(ev.WorkflowID, func(ctx context.Context) error { return l.advancer.CompleteDue(ctx, ev.WorkflowID) })
		}
	case blackboard.EventBidsComplete:
		add(ev.ClaimID, func(ctx context.Context) error { return l.advancer.AdvanceConsensus(ctx, ev) })
	case blackboard.EventBidSubmitted:
		// The scripts queue bids_complete, not single bids; a bid_submitted
		// reaches the queue only when audit events are replayed into it
		// (recovery by hand, the duplicate-delivery test), and advancing
		// on it is as harmless as any repeat.
		add(ev.ClaimID, func(ctx context.Context) error { return l.advancer.Advance(ctx, ev.ClaimID, ev.WorkflowID, false) })
	case blackboard.EventWorkflowCompleted:
		l.m.WorkflowsEnded.WithLabelValues(ev.Field("status")).Inc()
		if ev.Field("status") != string(blackboard.WorkflowCompleted) {
			add(ev.WorkflowID, func(ctx context.Context) error { return l.endClaimsOf(ctx, ev.WorkflowID) })
		}
	case blackboard.EventAgentRegistered:
		l.dir.Poke()
		// A new replica adds capacity: hand it the agent's waiting grants.
		if ev.Agent != "" {
			add("agent:"+ev.Agent, func(ctx context.Context) error { return l.bb.RefillAgent(ctx, ev.Agent) })
		}
	case blackboard.EventWorkflowEscalated:
		// At least once: the entry is acknowledged after the hook is
		// started, so a crash in between runs it again.
		if l.EscalateFunc != nil {
			l.EscalateFunc(ctx, escalationDoc(ev))
		}
	case blackboard.EventCapacityFreed:
		add("scheduler", l.releaseWaiting)
	case blackboard.EventResumed:
		add("scheduler", l.resume)
	}
	if len(tasks) == 0 {
		l.mu.Lock()
		l.acks = append(l.acks, ev.StreamID)
		l.mu.Unlock()
		return
	}
	tr := &tracker{loop: l, id: ev.StreamID, ev: ev}
	tr.pending.Store(int32(len(tasks)))
	for _, task := range tasks {
		task := task
		ok := l.disp.Submit(ctx, task.key, func(ctx context.Context) {
			err := task.run(ctx)
			if err != nil && ctx.Err() == nil {
				l.log.Warn().Err(err).Str("event", string(ev.Type)).Str("stream_id", ev.StreamID).
					Str("claim_id", ev.ClaimID).Str("artefact_id", ev.ArtefactID).Msg("event handler failed; will retry")
			}
			if ctx.Err() != nil && err == nil {
				err = ctx.Err()
			}
			tr.done(err)
		})
		if !ok {
			return
		}
	}
}

// escalationDoc is the JSON document the escalation hook receives.
func escalationDoc(ev blackboard.Event) map[string]any {
	doc := map[string]any{"type": string(ev.Type), "ts_ms": ev.TsMs, "workflow_id": ev.WorkflowID,
		"claim_id": ev.ClaimID, "artefact_id": ev.ArtefactID, "agent": ev.Agent}
	for k, v := range ev.Fields {
		if k != "ts" {
			doc[k] = v
		}
	}
	return doc
}

// releaseWaiting advances the best-ranked waiting claims when slots have
// freed: as many as there are free slots (the grant script itself keeps
// the strict order, so advancing one too many only re-queues it).
func (l *EventLoop) releaseWaiting(ctx context.Context) error {
	free, err := l.releasable(ctx)
	if err != nil || free <= 0 {
		return err
	}
	return l.advanceWaiting(ctx, min(free, 512))
}

// releasable is how many waiting claims a free slot awaits: all of them
// without orchestrator.max_concurrent_claims, else the free slots.
func (l *EventLoop) releasable(ctx context.Context) (int64, error) {
	counts, err := l.bb.CountScheduler(ctx)
	if err != nil {
		return 0, err
	}
	return releasableClaims(counts, l.cfg.MaxConcurrentClaims), nil
}

// releasableClaims is how many of the waiting claims the slots let go:
// every one without a limit (0), else no more than the free slots.
func releasableClaims(c blackboard.SchedulerCounts, limit int) int64 {
	free := c.Waiting
	if limit > 0 {
		free = min(free, int64(limit)-c.Running)
	}
	return max(free, 0)
}

// resume releases what waited while the instance was paused: every
// agent's waiting grants, and the waiting claims in release order — as
// many as there are free slots, not the whole backlog: with
// max_concurrent_claims the others would only be re-queued, one script
// call each, while the scheduler's task holds its worker; each claim
// that ends frees its slot and releases the next.
func (l *EventLoop) resume(ctx context.Context) error {
	for _, agent := range l.dir.Names() {
		if err := l.bb.RefillAgent(ctx, agent); err != nil {
			return err
		}
	}
	free, err := l.releasable(ctx)
	if err != nil || free <= 0 {
		return err
	}
	return l.advanceWaiting(ctx, free)
}

// advanceWaiting advances up to n waiting claims (all when n <= 0) in
// release order, inline: the scheduler's task runs on one worker, and
// submitting to others from a worker could deadlock on a full queue.
func (l *EventLoop) advanceWaiting(ctx context.Context, n int64) error {
	waiting, err := l.bb.WaitingClaims(ctx, n)
	if err != nil {
		return err
	}
	var firstErr error
	for _, w := range waiting {
		if err := l.advancer.Advance(ctx, w.ClaimID, "", false); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// endClaimsOf advances every claim of a workflow that failed or was
// cancelled, so that active ones are terminated promptly. It runs inline
// on its worker: submitting to other workers from a worker could deadlock
// on a full queue.
func (l *EventLoop) endClaimsOf(ctx context.Context, workflowID string) error {
	ids, err := l.bb.WorkflowClaims(ctx, workflowID)
	if err != nil {
		return err
	}
	claims, err := l.bb.GetClaims(ctx, ids)
	if err != nil {
		return err
	}
	var firstErr error
	for _, cl := range claims {
		if cl == nil || cl.Status.Final() {
			continue
		}
		if err := l.advancer.Advance(ctx, cl.ID, workflowID, false); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}
