package retrypolicy

import (
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Schedule is a Policy's delays as a cenkalti/backoff BackOff, for code
// that retries in process (backoff.Retry). Its n-th NextBackOff is the
// delay after attempt n; once the policy's attempts are used up it returns
// backoff.Stop, so backoff.Retry runs the operation at most MaxAttempts
// times. A Schedule is not safe for concurrent use.
type Schedule struct {
	policy  Policy
	rnd     *rand.Rand
	attempt int
}

var _ backoff.BackOff = (*Schedule)(nil)

// NewSchedule returns a Schedule for p; rnd gives the jitter (nil: none).
func (p Policy) NewSchedule(rnd *rand.Rand) *Schedule {
	return &Schedule{policy: p, rnd: rnd}
}

// NextBackOff returns the delay before the next attempt, or backoff.Stop.
func (s *Schedule) NextBackOff() time.Duration {
	s.attempt++
	if s.attempt >= s.policy.Attempts() {
		return backoff.Stop
	}
	return s.policy.Delay(s.attempt, s.rnd)
}

// Reset starts the schedule over, as for a new first attempt.
func (s *Schedule) Reset() { s.attempt = 0 }
