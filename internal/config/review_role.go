package config

import "github.com/settdev/sett/internal/reviewpolicy"

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
}

// Role returns the settings as a reviewpolicy.Role.
func (r ReviewConfig) Role() reviewpolicy.Role {
	return reviewpolicy.Role{Blocking: r.Blocking, Required: r.Required, Advisory: r.Advisory}
}

func (r *ReviewConfig) validate(v *validator, p string) {
	if r.Advisory && (r.Required || r.Blocking) {
		v.addf(p+".advisory", "an advisory reviewer never decides, so it cannot also be required or blocking; remove advisory, or required and blocking")
	}
}
