package orchestrator

import (
	"context"
	"errors"
	"sync"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
)

// deadLetters counts how many times in a row each queue entry's handling
// failed, and moves an entry that failed `after` times to the dead-letter
// stream (acknowledging it), so that an event that always fails is shown
// by `sett errors` instead of being retried forever. Counts live in memory:
// a new leader gives every entry `after` fresh attempts.
type deadLetters struct {
	mu    sync.Mutex
	ec    *blackboard.EventConsumer
	after int
	log   zerolog.Logger
	fails map[string]int
}

func (d *deadLetters) init(ec *blackboard.EventConsumer, after int, log zerolog.Logger) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ec, d.after, d.fails = ec, after, map[string]int{}
	d.log = log.With().Str("component", "dead_letters").Logger()
}

// forget drops the count of an entry that was handled.
func (d *deadLetters) forget(id string) {
	d.mu.Lock()
	delete(d.fails, id)
	d.mu.Unlock()
}

// failed counts a failed handling of ev; at the limit it dead-letters ev.
// A handling cut short by the leader stopping is not counted.
func (d *deadLetters) failed(ev blackboard.Event, err error) {
	if errors.Is(err, context.Canceled) || d.after <= 0 {
		return
	}
	d.mu.Lock()
	d.fails[ev.StreamID]++
	n := d.fails[ev.StreamID]
	ec := d.ec
	d.mu.Unlock()
	if n < d.after || ec == nil {
		return
	}
	if derr := ec.DeadLetter(context.Background(), ev, err, n); derr != nil {
		d.log.Warn().Err(derr).Str("stream_id", ev.StreamID).Msg("dead-lettering an event failed; it is retried")
		return
	}
	d.forget(ev.StreamID)
	d.log.Error().Err(err).Str("event", string(ev.Type)).Str("stream_id", ev.StreamID).Int("attempts", n).
		Str("claim_id", ev.ClaimID).Msg("event failed too many times; moved to the dead-letter stream (see sett errors)")
}
