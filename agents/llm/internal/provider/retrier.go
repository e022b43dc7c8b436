package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Retrier is the agent's one retry policy: it calls a Provider until an
// answer comes, a permanent error (Classify) is returned, MaxAttempts calls
// were made, or the next wait would end past Deadline. Waits grow
// exponentially (backoff/v4) and are never shorter than the Retry-After the
// provider asked for.
//
// The zero value retries with the defaults below, bounded only by ctx. A
// Retrier is not safe for concurrent use.
type Retrier struct {
	// Deadline bounds the whole call, waits included; zero means only
	// ctx bounds it. Waits are checked against it on the Now clock, and
	// it also bounds the context of every attempt (real time).
	Deadline time.Time
	// MaxAttempts bounds the number of calls; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// InitialWait and MaxWait shape the exponential backoff; 0 means
	// DefaultInitialWait and DefaultMaxWait.
	InitialWait, MaxWait time.Duration
	// RandomizationFactor is the jitter of each wait (0.2 = ±20 %); 0
	// means DefaultRandomization, negative means none (tests).
	RandomizationFactor float64
	// NowFunc is the clock the deadline is checked against; nil is time.Now.
	NowFunc func() time.Time
	// NewTimerFunc makes the timer that waits between attempts; nil is a real
	// timer. Tests inject one that records waits and fires at once.
	NewTimerFunc func() backoff.Timer
	// NotifyFunc, when set, is told of each retry: the error and the wait
	// before the next attempt.
	NotifyFunc func(err error, wait time.Duration)
}

// Retry defaults.
const (
	DefaultMaxAttempts   = 8
	DefaultInitialWait   = time.Second
	DefaultMaxWait       = 30 * time.Second
	DefaultRandomization = 0.2
)

// GaveUpError is returned when the Retrier stops retrying a retryable
// error: the attempts or the time ran out. Last is the last error.
type GaveUpError struct {
	Attempts int
	Last     error
	// Reason says why it stopped.
	Reason string
}

// Error names the attempts, the reason and the last error.
func (e *GaveUpError) Error() string {
	return fmt.Sprintf("gave up after %d attempt(s): %s; last error: %v", e.Attempts, e.Reason, e.Last)
}

// Unwrap returns the last error.
func (e *GaveUpError) Unwrap() error { return e.Last }

// Complete calls p.Complete(req) under the retry policy. It returns the
// answer (with Attempts set), a permanent error as Classify judged it, a
// *GaveUpError when a retryable error outlasted the attempts or the
// deadline, or ctx's error when ctx was cancelled.
func (r *Retrier) Complete(ctx context.Context, p Provider, req Request) (Response, error) {
	now := r.NowFunc
	if now == nil {
		now = time.Now
	}
	callCtx := ctx
	if !r.Deadline.IsZero() {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithDeadline(ctx, r.Deadline)
		defer cancel()
	}
	pol := &policy{r: r, now: now, exp: backoff.NewExponentialBackOff()}
	pol.exp.InitialInterval = orDefault(r.InitialWait, DefaultInitialWait)
	pol.exp.MaxInterval = orDefault(r.MaxWait, DefaultMaxWait)
	pol.exp.Multiplier = 2
	pol.exp.MaxElapsedTime = 0 // the deadline is checked by policy
	switch {
	case r.RandomizationFactor < 0:
		pol.exp.RandomizationFactor = 0
	case r.RandomizationFactor == 0:
		pol.exp.RandomizationFactor = DefaultRandomization
	default:
		pol.exp.RandomizationFactor = r.RandomizationFactor
	}

	var resp Response
	op := func() error {
		pol.attempts++
		var err error
		resp, err = p.Complete(callCtx, req)
		if err == nil {
			return nil
		}
		pol.last = err
		if callCtx.Err() != nil {
			// Cut by the deadline or by the caller: not the provider's
			// answer, so not for Classify to judge.
			return backoff.Permanent(err)
		}
		c := Classify(err)
		if !c.Retryable {
			pol.permanent = true
			return backoff.Permanent(err)
		}
		pol.retryAfter = c.RetryAfter
		return err
	}
	var timer backoff.Timer
	if r.NewTimerFunc != nil {
		timer = r.NewTimerFunc()
	}
	notify := func(err error, wait time.Duration) {
		if r.NotifyFunc != nil {
			r.NotifyFunc(err, wait)
		}
	}
	err := backoff.RetryNotifyWithTimer(op, backoff.WithContext(pol, callCtx), notify, timer)
	switch {
	case err == nil:
		resp.Attempts = pol.attempts
		return resp, nil
	case pol.permanent:
		return Response{}, err
	case ctx.Err() != nil:
		return Response{}, fmt.Errorf("cancelled after %d attempt(s): %w", pol.attempts, ctx.Err())
	}
	reason := pol.stopReason
	if reason == "" {
		reason = "the deadline passed (LLM_TIMEOUT)"
	}
	last := pol.last
	if last == nil {
		last = err
	}
	return Response{}, &GaveUpError{Attempts: pol.attempts, Last: last, Reason: reason}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// policy is the backoff.BackOff of one Complete call: exponential waits,
// raised to the provider's Retry-After, stopped by the attempt limit or
// the deadline.
type policy struct {
	r          *Retrier
	now        func() time.Time
	exp        *backoff.ExponentialBackOff
	attempts   int
	last       error
	retryAfter time.Duration
	stopReason string
	// permanent is set when the last error was judged not retryable.
	permanent bool
}

// NextBackOff returns the wait before the next attempt, or backoff.Stop.
func (p *policy) NextBackOff() time.Duration {
	wait := p.exp.NextBackOff()
	if p.retryAfter > wait {
		wait = p.retryAfter
	}
	maxAttempts := p.r.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	if p.attempts >= maxAttempts {
		p.stopReason = fmt.Sprintf("%d attempts made (LLM_MAX_ATTEMPTS)", p.attempts)
		return backoff.Stop
	}
	if d := p.r.Deadline; !d.IsZero() {
		if left := d.Sub(p.now()); wait >= left {
			p.stopReason = fmt.Sprintf("the next attempt would start in %s, after the deadline (%s left of LLM_TIMEOUT)",
				wait.Round(time.Millisecond), max(left, 0).Round(time.Millisecond))
			if p.retryAfter > 0 {
				p.stopReason = fmt.Sprintf("the provider asks to retry after %s, after the deadline (%s left of LLM_TIMEOUT)",
					p.retryAfter.Round(time.Millisecond), max(left, 0).Round(time.Millisecond))
			}
			return backoff.Stop
		}
	}
	return wait
}

// Reset starts a new series of waits.
func (p *policy) Reset() { p.exp.Reset() }
