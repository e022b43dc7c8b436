package reviewpolicy

import "strings"

// Role is how one reviewer's review counts (agents.<name>.review in
// sett.yml). The zero Role is an ordinary reviewer: its review counts
// toward the quorum and can send the work back, and its failure only
// matters through MinReviews and MaxMissing.
type Role struct {
	// Blocking: a severity at or above the policy's FailAt fails the
	// phase; blocking reviewers are read first.
	Blocking bool `json:"blocking,omitempty"`
	// Required: a missing, failed or ERROR review fails the phase.
	Required bool `json:"required,omitempty"`
	// Advisory: the review never decides (see the package
	// documentation). Ignored when Blocking or Required is set, which
	// configuration validation refuses.
	Advisory bool `json:"advisory,omitempty"`
}

// advisory reports whether the role is advisory in effect.
func (r Role) advisory() bool { return r.Advisory && !r.Blocking && !r.Required }

// String renders the role as "blocking, required", "advisory" or
// "ordinary".
func (r Role) String() string {
	var parts []string
	if r.Blocking {
		parts = append(parts, "blocking")
	}
	if r.Required {
		parts = append(parts, "required")
	}
	if r.advisory() {
		parts = append(parts, "advisory")
	}
	if len(parts) == 0 {
		return "ordinary"
	}
	return strings.Join(parts, ", ")
}
