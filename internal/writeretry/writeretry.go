// Package writeretry retries a Redis write in place, with exponential
// backoff and jitter (github.com/cenkalti/backoff), until it succeeds,
// is refused, or the deadline it serves has passed: a bid is worth
// sending until the bid deadline, a result until the lease ends. A blip
// in Redis then delays the write instead of changing the outcome.
package writeretry

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/settdev/sett/internal/blackboard"
)

// Waits between attempts: 50 ms growing to at most 1 s, so that a write
// lands soon after Redis is back.
const (
	initialWait = 50 * time.Millisecond
	maxWait     = time.Second
)

// NotifyFunc is told of each failed attempt and the wait before the next.
type NotifyFunc func(err error, wait time.Duration)

// Until runs op until it returns nil or an error that is not transient
// (blackboard.IsTransient), ctx ends, or deadline passes (zero: no
// deadline but ctx). It returns op's last error, or ctx's error when ctx
// ended first. notify may be nil.
func Until(ctx context.Context, deadline time.Time, op func(context.Context) error, notify NotifyFunc) error {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval, bo.MaxInterval, bo.MaxElapsedTime = initialWait, maxWait, 0
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	var last error
	err := backoff.RetryNotify(func() error {
		last = op(ctx)
		if last != nil && !blackboard.IsTransient(last) {
			return backoff.Permanent(last)
		}
		return last
	}, backoff.WithContext(bo, ctx), func(err error, wait time.Duration) {
		if notify != nil {
			notify(err, wait)
		}
	})
	if err == nil {
		return nil
	}
	if last != nil {
		return last
	}
	return err
}
