package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/settdev/sett/internal/blackboard"
)

// Defaults of eventFollower.
const (
	followPage  = 1000
	followBlock = 5 * time.Second
)

// eventHandler receives each event read; returning stop=true ends the
// read after that event.
type eventHandler func(ev blackboard.Event) (stop bool, err error)

// eventFollower reads the instance's event stream for one command: first a
// replay of history in pages (XRANGE), then a live follow with blocking
// reads (XREAD BLOCK) that start exactly after the last replayed id, so
// nothing falls into the seam and nothing is shown twice.
//
// When Redis drops, it tells the user once on notice, retries with
// exponential backoff and jitter, and resumes after the last id it
// delivered; the stream is durable, so nothing is lost while it is away.
//
// Not safe for concurrent use: one command, one follower.
type eventFollower struct {
	bb     *blackboard.Client
	notice io.Writer
	// page is how many events one replay round trip reads.
	page int64
	// block bounds each blocking read; the read returns early when events
	// arrive, and ctx cancellation never waits for it.
	block time.Duration
	// last is the id of the last event delivered: everything after it is
	// still to come. "0-0" reads from the very beginning.
	last string
	// down is true while an outage is being retried (the notice is out).
	down    bool
	backoff *backoff.ExponentialBackOff
	// afterPageFunc, when set, runs after every replay page (a test seam).
	afterPageFunc func()
}

// newEventFollower returns a follower that delivers the events after
// stream id after ("0-0" for the whole history).
func newEventFollower(bb *blackboard.Client, notice io.Writer, after string) *eventFollower {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = 100 * time.Millisecond
	bo.MaxInterval = 5 * time.Second
	bo.MaxElapsedTime = 0 // keep trying until the user gives up
	return &eventFollower{bb: bb, notice: notice, page: followPage, block: followBlock, last: after, backoff: bo}
}

// streamIDBefore returns the stream id just before the first possible
// event of millisecond ms, so that reading "after" it starts at ms.
func streamIDBefore(ms int64) string {
	if ms <= 0 {
		return "0-0"
	}
	return strconv.FormatInt(ms-1, 10) + "-18446744073709551615"
}

// replay delivers the stored events after f.last up to end (a stream id,
// or "+" for the newest) in pages. It reports whether the handler stopped
// it.
func (f *eventFollower) replay(ctx context.Context, end string, h eventHandler) (bool, error) {
	for {
		var evs []blackboard.Event
		err := f.retry(ctx, func() (err error) {
			// "(" makes the start exclusive: the page begins right after
			// the last delivered event.
			evs, err = f.bb.RangeEvents(ctx, "("+f.last, end, f.page)
			return err
		})
		if err != nil {
			return false, err
		}
		stop, err := f.deliver(evs, h)
		if stop || err != nil {
			return stop, err
		}
		if f.afterPageFunc != nil {
			f.afterPageFunc()
		}
		if int64(len(evs)) < f.page {
			return false, nil
		}
	}
}

// follow delivers new events as they are appended, until the handler
// stops it or ctx ends (then it returns ctx.Err()).
func (f *eventFollower) follow(ctx context.Context, h eventHandler) error {
	for {
		var evs []blackboard.Event
		err := f.retry(ctx, func() (err error) {
			evs, err = f.read(ctx)
			return err
		})
		if err != nil {
			return err
		}
		if stop, err := f.deliver(evs, h); stop || err != nil {
			return err
		}
	}
}

// read is one blocking XREAD after f.last. go-redis does not interrupt a
// blocking read when its context is cancelled (it bounds socket reads by
// the command's own block time), so the read runs aside and a cancelled
// ctx returns at once; the abandoned read ends with its block time or when
// the client closes.
func (f *eventFollower) read(ctx context.Context) ([]blackboard.Event, error) {
	type result struct {
		evs []blackboard.Event
		err error
	}
	done := make(chan result, 1)
	after := f.last
	go func() {
		evs, err := f.bb.ReadEvents(ctx, after, f.page, f.block)
		done <- result{evs, err}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-done:
		return r.evs, r.err
	}
}

// deliver hands events to h in order, advancing f.last past each one.
func (f *eventFollower) deliver(evs []blackboard.Event, h eventHandler) (bool, error) {
	for _, ev := range evs {
		f.last = ev.StreamID
		stop, err := h(ev)
		if stop || err != nil {
			return stop, err
		}
	}
	return false, nil
}

// retry runs op until it succeeds, ctx ends, or it fails in a way that
// retrying cannot fix. Connection failures are retried with backoff; the
// user hears about the outage once and again when it is over.
func (f *eventFollower) retry(ctx context.Context, op func() error) error {
	for {
		err := op()
		if err == nil {
			if f.down {
				f.down = false
				f.backoff.Reset()
				fmt.Fprintf(f.notice, "sett: reconnected to Redis; resuming after event %s\n", f.last)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, blackboard.ErrInvalid) || errors.Is(err, blackboard.ErrCorrupt) {
			return err
		}
		wait := f.backoff.NextBackOff()
		if !f.down {
			f.down = true
			fmt.Fprintf(f.notice, "sett: lost the connection to Redis (%v); reconnecting with backoff, will resume after event %s (Ctrl-C to stop)\n", err, f.last)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
