package config

import (
	"time"

	"github.com/settdev/sett/internal/retrypolicy"
)

// Limits on an agent's retry settings.
const (
	// MaxRetryAttempts bounds retry.max_attempts.
	MaxRetryAttempts = 100
	// MaxExitCode is the largest exit status a process can report.
	MaxExitCode = 255
)

// RetryConfig says how often, and how long after, a failed run of the
// agent's tool is tried again (agents.<name>.retry; the rules are
// in package retrypolicy). Every key is optional.
type RetryConfig struct {
	// MaxAttempts counts every run, the first included. Default (nil): 5,
	// and 2 for review grants (a reviewer is retried once) —
	// which is why a pointer keeps "not written" apart from any number.
	// Between 1 and 100. Read it with Policy.
	MaxAttempts *int `yaml:"max_attempts"`

	// Backoff is the delay after each failed attempt, the last one
	// repeating. Default [1m, 5m, 15m, 1h, 4h] (the scheduling rules), each moved by
	// up to ±10 % of jitter. When set: at least one delay, each > 0 (tests
	// use milliseconds).
	Backoff []Duration `yaml:"backoff"`

	// PermanentExitCodes are exit statuses (1 to 255) that fail at once,
	// without a retry. Default none.
	PermanentExitCodes []int `yaml:"permanent_exit_codes"`
}

// Policy returns the settings as a retrypolicy.Policy for a grant; review
// says whether it is a review grant, which gets retrypolicy's reviewer
// default when max_attempts was not written.
func (r RetryConfig) Policy(review bool) retrypolicy.Policy {
	p := retrypolicy.Policy{MaxAttempts: retrypolicy.DefaultMaxAttempts}
	if r.MaxAttempts != nil {
		p.MaxAttempts = *r.MaxAttempts
	}
	if review {
		p = p.ForReview(r.MaxAttempts != nil)
	}
	if len(r.Backoff) > 0 {
		p.Backoff = make([]time.Duration, len(r.Backoff))
		for i, d := range r.Backoff {
			p.Backoff[i] = d.Std()
		}
	}
	p.PermanentExitCodes = append([]int(nil), r.PermanentExitCodes...)
	return p
}

func (r *RetryConfig) applyDefaults(c *Config, p string) {
	if r.Backoff == nil && !c.src.isSet(p+".backoff") {
		for _, d := range retrypolicy.DefaultBackoff() {
			r.Backoff = append(r.Backoff, Duration(d))
		}
	}
}

func (r *RetryConfig) validate(v *validator, p string) {
	if r.MaxAttempts != nil {
		if n := *r.MaxAttempts; n < 1 || n > MaxRetryAttempts {
			v.addf(p+".max_attempts", "%d is not valid (must be between 1 and %d; 1 means no retry)", n, MaxRetryAttempts)
		}
	}
	if r.Backoff != nil && len(r.Backoff) == 0 {
		v.addf(p+".backoff", "is empty; list at least one delay (like [1m, 5m]), or leave it out for the default 1m, 5m, 15m, 1h, 4h")
	}
	for i, d := range r.Backoff {
		positiveDuration(v, p+".backoff["+itoa(i)+"]", d)
	}
	for i, code := range r.PermanentExitCodes {
		if code < 1 || code > MaxExitCode {
			v.addf(p+".permanent_exit_codes["+itoa(i)+"]", "%d is not an exit code that means failure (use 1 to %d)", code, MaxExitCode)
		}
	}
}
