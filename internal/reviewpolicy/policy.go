package reviewpolicy

import (
	"fmt"
	"strings"
)

// DefaultSeverities returns the default severity taxonomy, worst first. The slice is new on each call.
func DefaultSeverities() []string { return []string{"Blocker", "Major", "Minor"} }

// Default severity thresholds and quorum.
const (
	DefaultReworkAt   = "Major"
	DefaultFailAt     = "Blocker"
	DefaultMinReviews = 1
)

// Policy is how a review phase is decided (orchestrator.review_policy
// in sett.yml). DefaultPolicy returns the
// defaults; the zero Policy gets the default severities and thresholds
// from WithDefaults but a MinReviews of 0 (no quorum). A Policy is plain
// data, safe for concurrent reads.
type Policy struct {
	// Severities is the taxonomy, worst first. Names compare
	// case-insensitively. Empty: DefaultSeverities.
	Severities []string `json:"severities"`
	// ReworkAt is the severity at or above which a usable non-advisory
	// review sends the work back. Empty: DefaultReworkAt.
	ReworkAt string `json:"rework_at"`
	// FailAt is the severity at or above which a blocking reviewer fails
	// the phase. Empty: DefaultFailAt. Must be at or above ReworkAt.
	FailAt string `json:"fail_at"`
	// MinReviews is the least number of usable reviews from non-advisory
	// reviewers; fewer fails the phase. 0: no minimum.
	MinReviews int `json:"min_reviews"`
	// MaxMissing, when set, is the most non-advisory reviews that may be
	// missing, failed or ERROR; more fails the phase (the memory and review design's
	// verification cluster: "2+ missing/ERROR → ERROR" is MaxMissing 1).
	// nil: no limit.
	MaxMissing *int `json:"max_missing,omitempty"`
	// SeverityRequired makes a usable review without a severity count as
	// the worst (a contract gap), approving or not; by default only a
	// rejection without one does.
	SeverityRequired bool `json:"severity_required,omitempty"`
	// ReworkOnReject makes every usable non-advisory rejection
	// (NEEDS_REVISION) send the work back whatever its severity; by
	// default a rejection whose severity is below ReworkAt does not
	// (the memory and review design's verification cluster: "any NEEDS_REVISION → rework").
	ReworkOnReject bool `json:"rework_on_reject,omitempty"`
	// Gate names gate reviewers (the build verifier): a gate reviewer
	// without a usable review, or rejecting, or at or above ReworkAt,
	// fails the phase on its own and the other reviews are skipped
	// (RuleGate). Empty: no gate.
	Gate []string `json:"gate,omitempty"`
}

// DefaultPolicy returns the default policy: severities Blocker, Major,
// Minor; rework at Major; fail at Blocker; at least one usable review.
func DefaultPolicy() Policy {
	return Policy{
		Severities: DefaultSeverities(),
		ReworkAt:   DefaultReworkAt,
		FailAt:     DefaultFailAt,
		MinReviews: DefaultMinReviews,
	}
}

// WithDefaults returns p with empty Severities, ReworkAt and FailAt
// replaced by their defaults. MinReviews and MaxMissing are kept as they
// are, since 0 and nil are meaningful.
func (p Policy) WithDefaults() Policy {
	if len(p.Severities) == 0 {
		p.Severities = DefaultSeverities()
	}
	if p.ReworkAt == "" {
		p.ReworkAt = DefaultReworkAt
	}
	if p.FailAt == "" {
		p.FailAt = DefaultFailAt
	}
	return p
}

// Problem is one thing wrong with a Policy. Field is the key of the field
// in sett.yml (severities, severities[1], rework_at, fail_at, min_reviews,
// max_missing).
type Problem struct {
	Field   string
	Message string
}

// Problems lists what is wrong with p after WithDefaults, in field order;
// nil when nothing is. Each message names the value and what is allowed.
func (p Policy) Problems() []Problem {
	p = p.WithDefaults()
	var out []Problem
	add := func(field, format string, args ...any) {
		out = append(out, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	seen := make(map[string]int)
	for i, s := range p.Severities {
		f := fmt.Sprintf("severities[%d]", i)
		key := strings.ToLower(strings.TrimSpace(s))
		switch first, dup := seen[key]; {
		case key == "":
			add(f, "an empty severity name is not allowed")
		case noSeverity(s):
			add(f, "%q means no severity and cannot be a severity name", s)
		case s != strings.TrimSpace(s):
			add(f, "%q has leading or trailing spaces", s)
		case dup:
			add(f, "%q repeats severities[%d] (names compare case-insensitively)", s, first)
		default:
			seen[key] = i
		}
	}
	list := strings.Join(p.Severities, ", ")
	rework, okRework := p.rank(p.ReworkAt)
	if !okRework {
		add("rework_at", "%q is not one of the severities [%s]; set rework_at to one of them", p.ReworkAt, list)
	}
	fail, okFail := p.rank(p.FailAt)
	if !okFail {
		add("fail_at", "%q is not one of the severities [%s]; set fail_at to one of them", p.FailAt, list)
	}
	if okRework && okFail && fail > rework {
		add("fail_at", "%s is less severe than rework_at %s; fail_at must be at or above rework_at", p.FailAt, p.ReworkAt)
	}
	for i, g := range p.Gate {
		if strings.TrimSpace(g) == "" {
			add(fmt.Sprintf("gate[%d]", i), "an empty reviewer name is not allowed; name a reviewing agent")
		}
	}
	if p.MinReviews < 0 {
		add("min_reviews", "%d is not valid (use 0 for no minimum, or a positive number)", p.MinReviews)
	}
	if p.MaxMissing != nil && *p.MaxMissing < 0 {
		add("max_missing", "%d is not valid (use 0 when no review may be missing, or leave it out for no limit)", *p.MaxMissing)
	}
	return out
}

// Validate returns nil when p (after WithDefaults) has no Problems, else
// an error matching ErrInvalidPolicy that lists them.
func (p Policy) Validate() error {
	probs := p.Problems()
	if len(probs) == 0 {
		return nil
	}
	msgs := make([]string, len(probs))
	for i, pr := range probs {
		msgs[i] = pr.Field + ": " + pr.Message
	}
	return fmt.Errorf("%w: %s", ErrInvalidPolicy, strings.Join(msgs, "; "))
}

// rank returns the position of severity s in the taxonomy (0 is the
// worst), comparing case-insensitively, and whether it is there.
func (p Policy) rank(s string) (int, bool) {
	s = strings.TrimSpace(s)
	for i, x := range p.Severities {
		if strings.EqualFold(strings.TrimSpace(x), s) {
			return i, true
		}
	}
	return 0, false
}
