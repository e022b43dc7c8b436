package config

import (
	"time"

	"github.com/settdev/sett/internal/reviewpolicy"
)

// ReviewConfig says how an agent's reviews count (agents.<name>.review). The zero value is an ordinary reviewer.
type ReviewConfig struct {
	// Blocking: a review at or above orchestrator.review_policy.fail_at
	// fails the workflow; blocking reviewers are read first. Default
	// false.
	Blocking bool `yaml:"blocking"`

	// Required: a missing, failed or ERROR review terminates the claim.
	// Default false.
	Required bool `yaml:"required"`

	// Advisory: the review never decides; its failures are ignored and it
	// never counts toward min_reviews. Default false; cannot be combined
	// with blocking or required.
	Advisory bool `yaml:"advisory"`

	// Deadline is how long an advisory reviewer has to answer, counted
	// from its grant reaching it: once every other reviewer of the phase
	// answered and this one has not within it, it is skipped (a
	// review_skipped event, its grant withdrawn and its tool stopped) and
	// never delays the decision further. Only with advisory. Default 2m.
	Deadline Duration `yaml:"deadline"`
}

// DefaultAdvisoryDeadline is agents.<name>.review.deadline's default.
const DefaultAdvisoryDeadline = 2 * time.Minute

// Role returns the settings as a reviewpolicy.Role.
func (r ReviewConfig) Role() reviewpolicy.Role {
	return reviewpolicy.Role{Blocking: r.Blocking, Required: r.Required, Advisory: r.Advisory}
}

// AdvisoryDeadline is the reviewer's deadline: 0 unless it is advisory,
// Deadline or DefaultAdvisoryDeadline when it is.
func (r ReviewConfig) AdvisoryDeadline() time.Duration {
	switch {
	case !r.Advisory || r.Required || r.Blocking:
		return 0
	case r.Deadline.Std() > 0:
		return r.Deadline.Std()
	}
	return DefaultAdvisoryDeadline
}

func (r *ReviewConfig) validate(v *validator, p string) {
	if r.Advisory && (r.Required || r.Blocking) {
		v.addf(p+".advisory", "an advisory reviewer never decides, so it cannot also be required or blocking; remove advisory, or required and blocking")
	}
	if r.Deadline.Std() < 0 {
		v.addf(p+".deadline", "the deadline %s is negative; give a duration such as 30s", r.Deadline.Std())
	} else if r.Deadline.Std() > 0 && !r.Advisory {
		v.addf(p+".deadline", "only an advisory reviewer has a deadline of its own (the others are awaited until their tool timeout); set advisory: true or remove deadline")
	}
}
