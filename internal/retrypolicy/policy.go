package retrypolicy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Exit codes that POSIX shells use when a command cannot be run: a tool
// that is a shell (sh -c, a wrapper script) exits so when what it runs is
// not executable or not found, which no delay fixes.
const (
	ExitCannotExecute = 126
	ExitNotFound      = 127
)

// Defaults (docs/design.md, "Retries"; reviewers get fewer attempts).
const (
	DefaultMaxAttempts  = 5
	ReviewerMaxAttempts = 2
	// Jitter is the largest share of a delay that jitter adds or removes.
	Jitter = 0.10
)

// DefaultBackoff returns the scheduling rules' delays: 1m, 5m, 15m, 1h, 4h. The
// slice is new on each call.
func DefaultBackoff() []time.Duration {
	return []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 4 * time.Hour}
}

// Policy is one agent's retry policy (agents.<name>.retry in sett.yml).
// The zero Policy behaves as one attempt with the default delays;
// DefaultPolicy returns the defaults. A Policy is plain data, safe for
// concurrent reads.
type Policy struct {
	// MaxAttempts counts every run, the first included. Less than 1 is
	// read as 1.
	MaxAttempts int
	// Backoff is the delay after each failed attempt, the last one
	// repeating. Empty: DefaultBackoff.
	Backoff []time.Duration
	// PermanentExitCodes are exit codes that fail at once.
	PermanentExitCodes []int
}

// DefaultPolicy returns 5 attempts with the scheduling rules' delays.
func DefaultPolicy() Policy {
	return Policy{MaxAttempts: DefaultMaxAttempts, Backoff: DefaultBackoff()}
}

// ForReview returns the policy for a review grant: explicit says whether
// the agent set retry.max_attempts itself; when it did not, a reviewer is
// retried once (ReviewerMaxAttempts), so a failing reviewer does not hold the phase for long. The delays and
// permanent exit codes stay.
func (p Policy) ForReview(explicit bool) Policy {
	if !explicit {
		p.MaxAttempts = ReviewerMaxAttempts
	}
	return p
}

// Attempts returns MaxAttempts, at least 1: the N of "attempt n of N".
func (p Policy) Attempts() int { return max(p.MaxAttempts, 1) }

// Delay returns how long to wait after attempt (1 for the first run)
// failed before the next one: Backoff[attempt-1], the last entry for later
// attempts, moved by up to ±Jitter when rnd is not nil. attempt < 1 is read
// as 1. rnd is used from the calling goroutine only (a *rand.Rand is not
// safe for concurrent use).
func (p Policy) Delay(attempt int, rnd *rand.Rand) time.Duration {
	list := p.Backoff
	if len(list) == 0 {
		list = DefaultBackoff()
	}
	base := list[min(max(attempt, 1), len(list))-1]
	if rnd == nil || base <= 0 {
		return base
	}
	factor := 1 + Jitter*(2*rnd.Float64()-1)
	return time.Duration(float64(base) * factor)
}

// Transient reports whether a failure with these facts may be retried
// (see the package documentation for the rules).
func (p Policy) Transient(f FailureFacts) bool {
	ok, _ := p.Classify(f)
	return ok
}

// Classify reports whether a failure is transient and says why, in a
// phrase for Failure artefacts and logs ("the tool answered retryable:
// false", "exit code 2 is in permanent_exit_codes", "timeout is
// transient").
func (p Policy) Classify(f FailureFacts) (transient bool, why string) {
	switch {
	case f.Retryable != nil && !*f.Retryable:
		return false, "the tool answered retryable: false"
	case f.ExitCode > 0 && slices.Contains(p.PermanentExitCodes, f.ExitCode):
		return false, fmt.Sprintf("exit code %d is in permanent_exit_codes", f.ExitCode)
	case f.Retryable != nil:
		return true, "the tool answered retryable: true"
	}
	switch f.Kind {
	case KindExitNonzero:
		if f.ExitCode == ExitCannotExecute || f.ExitCode == ExitNotFound {
			return false, fmt.Sprintf("exit code %d is permanent (the shell could not run a command: not executable or not found)", f.ExitCode)
		}
		return true, string(f.Kind) + " is transient"
	case KindUnreadableOutput:
		return false, "unreadable_output is permanent (the tool printed no JSON object; fix the tool)"
	case KindStartFailed:
		return false, "start_failed is permanent (the program cannot be started; fix the command)"
	case KindCanceled:
		return false, "canceled is permanent (the run was stopped on purpose)"
	case KindSignaled, KindTimeout, KindLostLease, KindToolError, KindInvalidOutput, KindStdoutTooLarge:
		return true, string(f.Kind) + " is transient"
	}
	return true, fmt.Sprintf("unknown failure kind %q is treated as transient", f.Kind)
}

// Retry is what Next decided about one failed attempt.
type Retry struct {
	// Again is true when another attempt should run.
	Again bool
	// Delay is how long to wait before it (0 when Again is false).
	Delay time.Duration
	// Reason is one sentence, such as "attempt 2 of 5 failed (timeout is
	// transient); attempt 3 in 5m2s" or "attempt 5 of 5 failed (timeout is
	// transient); no attempts left".
	Reason string
}

// Next decides what follows the failure of attempt (1 for the first run):
// another attempt after Delay when the failure is transient and attempts
// remain, otherwise none.
func (p Policy) Next(attempt int, f FailureFacts, rnd *rand.Rand) Retry {
	attempt = max(attempt, 1)
	n := p.Attempts()
	transient, why := p.Classify(f)
	head := fmt.Sprintf("attempt %d of %d failed (%s)", attempt, n, why)
	switch {
	case !transient:
		return Retry{Reason: head + "; not retried"}
	case attempt >= n:
		return Retry{Reason: head + "; no attempts left"}
	}
	d := p.Delay(attempt, rnd)
	return Retry{Again: true, Delay: d, Reason: fmt.Sprintf("%s; attempt %d in %s", head, attempt+1, d.Round(time.Millisecond))}
}
