package config

import (
	"strings"

	"github.com/settdev/sett/internal/reviewpolicy"
)

// Default review policy. The default severities are
// reviewpolicy.DefaultSeverities: Blocker, Major, Minor.
const (
	DefaultReworkAt   = reviewpolicy.DefaultReworkAt
	DefaultFailAt     = reviewpolicy.DefaultFailAt
	DefaultMinReviews = reviewpolicy.DefaultMinReviews
)

// ReviewPolicyConfig decides each review phase from the reviewers'
// verdicts and severities (orchestrator.review_policy; the
// rules are in package reviewpolicy). Every key is optional.
type ReviewPolicyConfig struct {
	// Severities is the severity taxonomy, worst first; names compare
	// case-insensitively. Default [Blocker, Major, Minor]; when set, it
	// must not be empty, and rework_at and fail_at must name entries of it.
	Severities []string `yaml:"severities"`

	// ReworkAt: a usable non-advisory review at or above this severity
	// sends the work back to its author. Default Major.
	ReworkAt string `yaml:"rework_at"`

	// FailAt: a blocking reviewer at or above this severity fails the
	// workflow. Default Blocker; must be at or above rework_at.
	FailAt string `yaml:"fail_at"`

	// MinReviews is the least number of usable reviews from non-advisory
	// reviewers; fewer terminates the claim. Default 1; 0 means no
	// minimum.
	MinReviews int `yaml:"min_reviews"`

	// MaxMissing is the most non-advisory reviews that may be missing,
	// failed or ERROR; more terminates the claim (the memory and review design's verification
	// cluster uses 1). Default: no limit (nil); must be >= 0.
	MaxMissing *int `yaml:"max_missing"`

	// SeverityRequired makes a usable review without a severity count as
	// the worst severity (a contract gap), as the memory and review design asks of its
	// critique and release clusters. Default false: only a rejection
	// without a severity counts as the worst.
	SeverityRequired bool `yaml:"severity_required"`

	// ReworkOnReject sends the work back on every usable non-advisory
	// rejection (NEEDS_REVISION), whatever its severity, as the memory and review design's
	// verification cluster does. Default false: a rejection below
	// rework_at does not send it back.
	ReworkOnReject bool `yaml:"rework_on_reject"`
}

// Policy returns the settings as a reviewpolicy.Policy.
func (r ReviewPolicyConfig) Policy() reviewpolicy.Policy {
	var maxMissing *int
	if r.MaxMissing != nil {
		n := *r.MaxMissing
		maxMissing = &n
	}
	return reviewpolicy.Policy{
		Severities:       append([]string(nil), r.Severities...),
		ReworkAt:         r.ReworkAt,
		FailAt:           r.FailAt,
		MinReviews:       r.MinReviews,
		MaxMissing:       maxMissing,
		SeverityRequired: r.SeverityRequired,
		ReworkOnReject:   r.ReworkOnReject,
	}
}

func (r *ReviewPolicyConfig) applyDefaults(c *Config, p string) {
	if r.Severities == nil && !c.src.isSet(p+".severities") {
		r.Severities = reviewpolicy.DefaultSeverities()
	}
	if r.ReworkAt == "" {
		r.ReworkAt = DefaultReworkAt
	}
	if r.FailAt == "" {
		r.FailAt = DefaultFailAt
	}
	setDefault(c, &r.MinReviews, DefaultMinReviews, p+".min_reviews")
}

func (r *ReviewPolicyConfig) validate(v *validator, p string) {
	if len(r.Severities) == 0 {
		v.addf(p+".severities", "is empty; list the severities worst first, or leave it out for %s", strings.Join(reviewpolicy.DefaultSeverities(), ", "))
		return
	}
	for _, prob := range r.Policy().Problems() {
		v.addf(p+"."+prob.Field, "%s", prob.Message)
	}
}

// reviewWarnings warns when every agent that bids review is advisory while
// min_reviews asks for reviews: every review phase would then fail.
func (c *Config) reviewWarnings(warn func(path, format string, args ...any)) {
	var reviewers []string
	for _, name := range c.AgentNames() {
		a := c.Agents[name]
		if a.BiddingStrategy != BidReview {
			continue
		}
		if !a.Review.Advisory || a.Review.Required || a.Review.Blocking {
			return
		}
		reviewers = append(reviewers, name)
	}
	if len(reviewers) > 0 && c.Orchestrator.ReviewPolicy.MinReviews > 0 {
		warn("orchestrator.review_policy.min_reviews",
			"every reviewer (%s) is advisory and advisory reviews never count toward min_reviews %d, so every review phase fails; add a non-advisory reviewer or set min_reviews: 0",
			strings.Join(reviewers, ", "), c.Orchestrator.ReviewPolicy.MinReviews)
	}
}
