package orchestrator

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
)

// Retention is what the janitor keeps (retention in sett.yml).
// A zero period or bound keeps that kind of data forever.
type Retention struct {
	// Workflows is how long a finished workflow is kept after it ended.
	Workflows time.Duration
	// EventsMaxLen and EventsMaxAge bound the events stream.
	EventsMaxLen int64
	EventsMaxAge time.Duration
	// ConsumerIdle is how long a stream consumer without pending entries
	// (or a replica without a beat) may stay idle.
	ConsumerIdle time.Duration
	// Interval is the period of the passes; zero means 1m.
	Interval time.Duration
	// Batch caps the workflows deleted per pass; zero means 100.
	Batch int
}

// RetentionFrom returns the retention settings of a loaded config.
func RetentionFrom(r config.RetentionConfig) Retention {
	return Retention{
		Workflows: r.Workflows.Std(), EventsMaxLen: r.EventsMaxLen, EventsMaxAge: r.EventsMaxAge.Std(),
		ConsumerIdle: r.ConsumerIdle.Std(), Interval: r.Interval.Std(), Batch: r.Batch,
	}
}

func (r *Retention) applyDefaults() {
	if r.Interval <= 0 {
		r.Interval = time.Minute
	}
	if r.Batch <= 0 {
		r.Batch = 100
	}
}

// JanitorReport says what one pass removed (or, in a dry run, would
// remove).
type JanitorReport struct {
	// Workflows are the ids of the finished workflows deleted.
	Workflows []string
	// Keys counts the Redis keys deleted with them.
	Keys int
	// Events counts the entries trimmed from the events stream (a dry run
	// counts an exact trim; the real trim removes whole nodes, at most
	// that many).
	Events int64
	// Consumers are the consumers and replicas removed, "<key> <name>".
	Consumers []string
	// Skipped counts workflows left for a later pass (they changed during
	// the pass).
	Skipped int
}

// Janitor applies the retention settings: it deletes finished workflows
// whose retention period passed (each in one atomic step), trims the
// events stream and removes idle consumers. Only the leading orchestrator
// runs it, so passes never overlap across processes; `sett gc` may run a
// pass too, which is safe because every step is atomic and idempotent.
// Each pass deletes at most Batch workflows, and passes are Interval
// apart: a backlog drains at a bounded rate instead of loading Redis.
type Janitor struct {
	bb  *blackboard.Client
	ret Retention
	log zerolog.Logger
}

// NewJanitor wires a janitor.
func NewJanitor(bb *blackboard.Client, ret Retention, log zerolog.Logger) *Janitor {
	ret.applyDefaults()
	return &Janitor{bb: bb, ret: ret, log: log.With().Str("component", "janitor").Logger()}
}

// Run runs a pass every Interval until ctx ends. A failed pass is logged
// and retried next period; it never costs the leadership.
func (j *Janitor) Run(ctx context.Context) error {
	t := time.NewTicker(j.ret.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		rep, err := j.Pass(ctx, false)
		if err != nil && ctx.Err() == nil {
			j.log.Warn().Err(err).Msg("retention pass failed; retrying next period")
		}
		if len(rep.Workflows) > 0 || rep.Events > 0 || len(rep.Consumers) > 0 {
			j.log.Info().Int("workflows", len(rep.Workflows)).Int("keys", rep.Keys).
				Int64("events", rep.Events).Int("consumers", len(rep.Consumers)).Msg("retention pass")
		}
	}
}

// Pass applies the retention settings once (with dryRun: only reports
// what it would remove). It goes on after a failed step and returns the
// first error with what the other steps did.
func (j *Janitor) Pass(ctx context.Context, dryRun bool) (JanitorReport, error) {
	var rep JanitorReport
	var errs []error
	// The events stream grows with the work, whatever the purge does: it is
	// trimmed first, and again while a long purge runs, so that its bound
	// holds within about one Interval even when a pass takes longer.
	trimmed := time.Now()
	trim := func() {
		if j.ret.EventsMaxLen > 0 || j.ret.EventsMaxAge > 0 {
			n, err := j.bb.TrimEvents(ctx, j.ret.EventsMaxLen, j.ret.EventsMaxAge, dryRun)
			rep.Events += n
			errs = append(errs, err)
			trimmed = time.Now()
		}
	}
	trim()
	if j.ret.Workflows > 0 {
		ids, err := j.bb.FinishedWorkflows(ctx, j.ret.Workflows, j.ret.Batch)
		errs = append(errs, err)
		for _, id := range ids {
			n, err := j.bb.PurgeWorkflow(ctx, id, j.ret.Workflows, dryRun)
			switch {
			case err == nil:
				rep.Workflows = append(rep.Workflows, id)
				rep.Keys += n
			case errors.Is(err, blackboard.ErrNotFound):
				// Gone already (another pass, `sett gc`).
			case errors.Is(err, blackboard.ErrChanged), errors.Is(err, blackboard.ErrRetained),
				errors.Is(err, blackboard.ErrRunning):
				rep.Skipped++
			default:
				errs = append(errs, err)
			}
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			if !dryRun && time.Since(trimmed) >= j.ret.Interval {
				trim()
			}
		}
	}
	if j.ret.ConsumerIdle > 0 {
		gone, err := j.bb.ReapConsumers(ctx, j.ret.ConsumerIdle, dryRun)
		rep.Consumers = gone
		errs = append(errs, err)
	}
	for _, err := range errs {
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}
