package config

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/settdev/sett/internal/reviewpolicy"
)

// ReviewClusterConfig is one named review cluster
// (orchestrator.review_clusters.<name>): a review policy of its own,
// selected for the artefact types it lists, with its own loop rules
// (the critique, verification and release clusters in one pipeline). Artefact types no
// cluster lists are decided by orchestrator.review_policy, unchanged.
type ReviewClusterConfig struct {
	// ArtefactTypes are the artefact types (exact names) whose review
	// phases this cluster decides. Required; a type may belong to one
	// cluster only.
	ArtefactTypes []string `yaml:"artefact_types"`

	// Policy is the cluster's review policy: the same keys, defaults and
	// rules as orchestrator.review_policy.
	Policy ReviewPolicyConfig `yaml:"policy"`

	// Reviewers optionally names the agents that review for the cluster;
	// each must be a configured agent with bidding_strategy review. Empty:
	// the review agents that consume the cluster's artefact types. Used
	// by the checks of min_reviews and fail_at.
	Reviewers []string `yaml:"reviewers"`

	// Gate names gate reviewers (the build verifier): a gate reviewer's
	// failure (no usable review, a rejection, or a severity at or above
	// rework_at) fails the phase on its own and the other reviews are
	// skipped. Default: none.
	Gate []string `yaml:"gate"`

	// MaxRevisions is how many times the cluster sends one artefact back
	// for rework before at_limit applies. Default: the global
	// orchestrator.max_review_iterations; 0 means unlimited.
	MaxRevisions *int `yaml:"max_revisions"`

	// AtLimit is what happens when a rework would pass max_revisions:
	// fail (terminate, as max_review_iterations does) or proceed (go on
	// with the version as it is, recording the review_decision as a
	// warning). Default fail.
	AtLimit string `yaml:"at_limit"`

	// OnError is what a phase the cluster's rules fail for want of usable
	// reviews (rules gate, required, min_reviews, max_missing: an ERROR,
	// a failed or missing review, a gate's FAIL) does: fail (terminate,
	// the workflow fails) or replan (send the work back to the producer
	// of the nearest upstream artefact of type replan_type, with this
	// phase's reviews and their memories as feedback; after max_replans
	// replans the work proceeds, the decision recorded as a warning). A
	// blocking reviewer's verdict always fails. Default fail.
	OnError string `yaml:"on_error"`

	// ReplanType is the artefact type on_error: replan sends back (the
	// Plan, for verification): the nearest one the reviewed artefact was
	// built from, in its latest version. Required with on_error: replan.
	ReplanType string `yaml:"replan_type"`

	// MaxReplans is how many replans one workflow's cluster makes before
	// it proceeds with a warning. Default 3.
	MaxReplans *int `yaml:"max_replans"`
}

// DefaultMaxReplans is review_clusters.<name>.max_replans's default.
const DefaultMaxReplans = 3

// Cluster returns the settings as a reviewpolicy.Cluster named name.
func (r ReviewClusterConfig) Cluster(name string) reviewpolicy.Cluster {
	p := r.Policy.Policy()
	p.Gate = append([]string(nil), r.Gate...)
	maxReplans := DefaultMaxReplans
	if r.MaxReplans != nil {
		maxReplans = *r.MaxReplans
	}
	var maxRev *int
	if r.MaxRevisions != nil {
		n := *r.MaxRevisions
		maxRev = &n
	}
	return reviewpolicy.Cluster{
		Name: name, Policy: p,
		ArtefactTypes: append([]string(nil), r.ArtefactTypes...),
		Reviewers:     append([]string(nil), r.Reviewers...),
		MaxRevisions:  maxRev,
		AtLimit:       reviewpolicy.AtLimit(r.AtLimit),
		OnError:       reviewpolicy.OnError(r.OnError),
		ReplanType:    r.ReplanType,
		MaxReplans:    maxReplans,
	}
}

// Clusters returns every review cluster: orchestrator.review_policy as
// the default, and the named review_clusters sorted by name.
func (o OrchestratorConfig) Clusters() reviewpolicy.Clusters {
	cs := reviewpolicy.Clusters{Default: reviewpolicy.Cluster{Name: reviewpolicy.DefaultClusterName, Policy: o.ReviewPolicy.Policy()}}
	for _, name := range sortedClusterNames(o.ReviewClusters) {
		cs.Named = append(cs.Named, o.ReviewClusters[name].Cluster(name))
	}
	return cs
}

func sortedClusterNames(m map[string]*ReviewClusterConfig) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (r *ReviewClusterConfig) applyDefaults(c *Config, p string) {
	r.Policy.applyDefaults(c, p+".policy")
	if r.AtLimit == "" {
		r.AtLimit = string(reviewpolicy.AtLimitFail)
	}
	if r.OnError == "" {
		r.OnError = string(reviewpolicy.OnErrorFail)
	}
}

// validateReviewClusters checks orchestrator.review_clusters against
// each other and the agents.
func (c *Config) validateReviewClusters(v *validator) {
	owner := map[string]string{} // artefact type → cluster
	for _, name := range sortedClusterNames(c.Orchestrator.ReviewClusters) {
		p := "orchestrator.review_clusters." + name
		r := c.Orchestrator.ReviewClusters[name]
		if r == nil {
			v.addf(p, "is empty; give at least artefact_types")
			continue
		}
		switch {
		case name == reviewpolicy.DefaultClusterName:
			v.addf(p, "the name %q is reserved for orchestrator.review_policy; give the cluster another name", name)
		case !agentNamePattern.MatchString(name):
			v.addf(p, "%q is not a valid cluster name (lower-case letters, digits, '-' and '_', starting with a letter or digit)", name)
		}
		if len(r.ArtefactTypes) == 0 {
			v.addf(p+".artefact_types", "is empty; list the artefact types this cluster reviews, such as [Plan]")
		}
		for i, t := range r.ArtefactTypes {
			f := fmt.Sprintf("%s.artefact_types[%d]", p, i)
			switch other, dup := owner[t]; {
			case strings.TrimSpace(t) == "" || t != strings.TrimSpace(t):
				v.addf(f, "%q is not an artefact type (empty, or with spaces around it)", t)
			case dup:
				v.addf(f, "%s is already reviewed by cluster %s; an artefact type belongs to one cluster", t, other)
			default:
				owner[t] = name
			}
		}
		r.Policy.validate(v, p+".policy")
		for i, a := range r.Reviewers {
			c.checkReviewer(v, fmt.Sprintf("%s.reviewers[%d]", p, i), a)
		}
		for i, g := range r.Gate {
			f := fmt.Sprintf("%s.gate[%d]", p, i)
			if len(r.Reviewers) > 0 && !slices.Contains(r.Reviewers, g) {
				v.addf(f, "%q is not one of the cluster's reviewers [%s]; add it to reviewers or remove it from gate", g, strings.Join(r.Reviewers, ", "))
				continue
			}
			c.checkReviewer(v, f, g)
		}
		if r.MaxRevisions != nil && *r.MaxRevisions < 0 {
			v.addf(p+".max_revisions", "%d is not valid (use a positive number, 0 for unlimited, or leave it out for orchestrator.max_review_iterations)", *r.MaxRevisions)
		}
		if !reviewpolicy.AtLimit(r.AtLimit).Valid() {
			v.addf(p+".at_limit", "%q is not valid; use fail or proceed", r.AtLimit)
		}
		switch {
		case !reviewpolicy.OnError(r.OnError).Valid():
			v.addf(p+".on_error", "%q is not valid; use fail or replan", r.OnError)
		case r.OnError == string(reviewpolicy.OnErrorReplan) && strings.TrimSpace(r.ReplanType) == "":
			v.addf(p+".replan_type", "is empty; on_error: replan needs the artefact type to send back, such as Plan")
		case r.OnError == string(reviewpolicy.OnErrorReplan) && slices.Contains(r.ArtefactTypes, r.ReplanType):
			v.addf(p+".replan_type", "%s is reviewed by this cluster itself; name an upstream type (the one the reviewed work is built from), such as Plan", r.ReplanType)
		case r.OnError != string(reviewpolicy.OnErrorReplan) && (r.ReplanType != "" || r.MaxReplans != nil):
			v.addf(p+".on_error", "replan_type and max_replans apply only with on_error: replan; set it or remove them")
		}
		if r.MaxReplans != nil && *r.MaxReplans < 1 {
			v.addf(p+".max_replans", "%d is not valid; use 1 or more (leave it out for %d)", *r.MaxReplans, DefaultMaxReplans)
		}
	}
}

// checkReviewer refuses a reviewer name that is no agent, or an agent
// that never reviews.
func (c *Config) checkReviewer(v *validator, p, name string) {
	a, ok := c.Agents[name]
	switch {
	case !ok:
		v.addf(p, "%q is not a configured agent (agents: %s)", name, strings.Join(c.AgentNames(), ", "))
	case a.BiddingStrategy != BidReview:
		v.addf(p, "agent %q has bidding_strategy %s, so it never reviews; set bidding_strategy: review or remove it here", name, a.BiddingStrategy)
	}
}

// clusterReviewers returns the agents that review for cluster: its
// reviewers when listed, else every review agent consuming one of types
// (types nil: the default cluster, whose reviewers are those consuming
// some type no named cluster claims, or consuming every type).
func (c *Config) clusterReviewers(listed, types []string, claimed map[string]bool) []string {
	if len(listed) > 0 {
		return listed
	}
	var out []string
	for _, name := range c.AgentNames() {
		a := c.Agents[name]
		if a.BiddingStrategy != BidReview {
			continue
		}
		if len(a.Consumes) == 0 {
			out = append(out, name)
			continue
		}
		match := false
		for _, pat := range a.Consumes {
			if types == nil {
				// A pattern that names a claimed type exactly is the
				// cluster's; any other may match an unclaimed type.
				if !claimed[pat] {
					match = true
				}
				continue
			}
			for _, t := range types {
				if ok, _ := path.Match(pat, t); ok {
					match = true
				}
			}
		}
		if match {
			out = append(out, name)
		}
	}
	return out
}

// clusterWarnings warns, for the default policy and each named cluster,
// about settings that silently misfire: min_reviews above the reviewers
// that can give one, fail_at without any blocking reviewer, and approval
// forms that severity_required turns into the worst severity.
func (c *Config) clusterWarnings(warn func(path, format string, args ...any)) {
	claimed := map[string]bool{}
	for _, r := range c.Orchestrator.ReviewClusters {
		if r == nil {
			continue
		}
		for _, t := range r.ArtefactTypes {
			claimed[t] = true
		}
	}
	type one struct {
		path      string
		policy    ReviewPolicyConfig
		reviewers []string
	}
	var all []one
	if len(c.Orchestrator.ReviewClusters) > 0 || c.anyReviewer() {
		all = append(all, one{"orchestrator.review_policy", c.Orchestrator.ReviewPolicy, c.clusterReviewers(nil, nil, claimed)})
	}
	for _, name := range sortedClusterNames(c.Orchestrator.ReviewClusters) {
		r := c.Orchestrator.ReviewClusters[name]
		if r == nil {
			continue
		}
		all = append(all, one{"orchestrator.review_clusters." + name + ".policy", r.Policy, c.clusterReviewers(r.Reviewers, r.ArtefactTypes, nil)})
	}
	for _, x := range all {
		if len(x.reviewers) == 0 {
			if x.path != "orchestrator.review_policy" {
				warn(x.path, "no agent reviews this cluster's artefact types; add a review agent that consumes them")
			}
			continue
		}
		var counting, blocking []string
		for _, r := range x.reviewers {
			rv := c.Agents[r].Review
			if rv.Blocking {
				blocking = append(blocking, r)
			}
			if !rv.Advisory || rv.Blocking || rv.Required {
				counting = append(counting, r)
			}
		}
		if len(counting) > 0 && x.policy.MinReviews > len(counting) {
			warn(x.path+".min_reviews", "%d is more than the %d non-advisory reviewers that can give a review (%s), so every review phase fails; lower min_reviews or add reviewers",
				x.policy.MinReviews, len(counting), strings.Join(counting, ", "))
		}
		// fail_at at the worst severity is what a custom taxonomy must
		// say when it means "as the default"; a milder one shows the
		// author expects it to fail phases, which needs a blocking reviewer.
		worst := len(x.policy.Severities) > 0 && strings.EqualFold(x.policy.FailAt, x.policy.Severities[0])
		if c.src.isSet(x.path+".fail_at") && len(blocking) == 0 && !worst {
			warn(x.path+".fail_at", "%s does nothing: no reviewer of %s is blocking (agents.<name>.review.blocking), and only blocking reviewers fail a phase; mark one blocking or remove fail_at",
				x.policy.FailAt, strings.Join(x.reviewers, ", "))
		}
		if x.policy.SeverityRequired && len(x.policy.Severities) > 0 {
			for _, r := range x.reviewers {
				if approvesWithoutSeverity(c.Agents[r].Command) {
					warn("agents."+r+".command", `sett-reviewer approves with {"verdict": "approve"} and no severity, which %s (severity_required) counts as %s, so its approvals fail or send back the work; add --approve-severity %s`,
						x.path, x.policy.Severities[0], x.policy.Severities[len(x.policy.Severities)-1])
				}
			}
		}
	}
}

// approvesWithoutSeverity reports whether argv runs the shipped
// sett-reviewer without --approve-severity: its approvals then carry no
// severity.
func approvesWithoutSeverity(argv []string) bool {
	if len(argv) == 0 || path.Base(argv[0]) != "sett-reviewer" {
		return false
	}
	for _, a := range argv[1:] {
		if a == "--approve-severity" || a == "-approve-severity" || strings.HasPrefix(a, "--approve-severity=") || strings.HasPrefix(a, "-approve-severity=") {
			return false
		}
	}
	return true
}

// anyReviewer reports whether some agent bids review.
func (c *Config) anyReviewer() bool {
	for _, a := range c.Agents {
		if a.BiddingStrategy == BidReview {
			return true
		}
	}
	return false
}
