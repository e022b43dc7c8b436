package reviewpolicy

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultClusterName names the cluster built from the single
// orchestrator.review_policy: it decides every artefact type no named
// cluster claims.
const DefaultClusterName = "default"

// AtLimit says what a cluster does when a rework would exceed its
// revision limit (review_clusters.<name>.at_limit).
type AtLimit string

// The AtLimit values.
const (
	// AtLimitFail: the claim is terminated (a MaxIterationsExceeded
	// Failure), as orchestrator.max_review_iterations always did.
	AtLimitFail AtLimit = "fail"
	// AtLimitProceed: the work proceeds as it is and the decision is
	// recorded as a warning (the critique cluster: "max 1 loop,
	// then proceed with warning").
	AtLimitProceed AtLimit = "proceed"
)

// AllAtLimits lists every AtLimit.
func AllAtLimits() []AtLimit { return []AtLimit{AtLimitFail, AtLimitProceed} }

// Valid reports whether a is one of AllAtLimits.
func (a AtLimit) Valid() bool { return slices.Contains(AllAtLimits(), a) }

// OnError says what a cluster does with a phase its rules fail for want
// of usable reviews (review_clusters.<name>.on_error).
type OnError string

// The OnError values.
const (
	// OnErrorFail: the phase fails, as every failed phase always did.
	OnErrorFail OnError = "fail"
	// OnErrorReplan: the work goes back to the producer of an upstream
	// artefact (Cluster.ReplanType), at most Cluster.MaxReplans times.
	OnErrorReplan OnError = "replan"
)

// AllOnErrors lists every OnError.
func AllOnErrors() []OnError { return []OnError{OnErrorFail, OnErrorReplan} }

// Valid reports whether o is one of AllOnErrors.
func (o OnError) Valid() bool { return slices.Contains(AllOnErrors(), o) }

// Cluster is one named review policy (the critique, verification and release clusters):
// its policy, the artefact types it reviews and its loop rules. The zero
// Cluster decides by the zero Policy and never proceeds at a limit. A
// Cluster is plain data, safe for concurrent reads.
type Cluster struct {
	// Name is the key under orchestrator.review_clusters, or
	// DefaultClusterName.
	Name string
	// Policy decides each review phase of the cluster.
	Policy Policy
	// ArtefactTypes are the artefact types whose reviews this cluster
	// decides; empty for the default cluster.
	ArtefactTypes []string
	// Reviewers, when set, are the agents that review for the cluster;
	// configuration validation checks them against the agents.
	Reviewers []string
	// MaxRevisions is how many times the cluster sends a version back
	// before AtLimit applies; nil: orchestrator.max_review_iterations.
	MaxRevisions *int
	// AtLimit is what happens at MaxRevisions; "": AtLimitFail.
	AtLimit AtLimit
	// OnError is what a phase failed for want of usable reviews does;
	// "": OnErrorFail. ReplanType is the upstream artefact type a replan
	// sends back, MaxReplans how many replans a workflow's cluster makes
	// before it proceeds with a warning.
	OnError    OnError
	ReplanType string
	MaxReplans int
}

// Clusters selects the cluster that decides a review phase. The zero
// value decides everything by the zero default cluster.
type Clusters struct {
	// Default decides the artefact types no named cluster claims.
	Default Cluster
	// Named are the review_clusters, by name.
	Named []Cluster
}

// For returns the cluster that decides reviews of artefactType: the
// first named cluster listing it (names compare exactly, as artefact
// types do), else Default.
func (cs Clusters) For(artefactType string) Cluster {
	for _, c := range cs.Named {
		if slices.Contains(c.ArtefactTypes, artefactType) {
			return c
		}
	}
	return cs.Default
}

// RevisionLimit is the cluster's revision limit, or global (the
// orchestrator's max_review_iterations) when it sets none.
func (c Cluster) RevisionLimit(global int) int {
	if c.MaxRevisions != nil {
		return *c.MaxRevisions
	}
	return global
}

// ApplyLimit applies the cluster's at_limit rule to decision d of a
// phase that reviewed a version already sent back revisions times, under
// revision limit limit (0: none). A rework at the limit with AtLimit
// proceed becomes a proceed by RuleAtLimit with Warning set, keeping the
// reviews that asked for rework in Rejecting; every other decision is
// returned unchanged (at_limit fail is enforced where the rework is
// created, with its MaxIterationsExceeded Failure).
func (c Cluster) ApplyLimit(d Decision, revisions, limit int) Decision {
	if d.Outcome != OutcomeRework || limit <= 0 || revisions < limit || c.AtLimit != AtLimitProceed {
		return d
	}
	d.Outcome, d.Rule, d.Warning = OutcomeProceed, RuleAtLimit, true
	d.Reason = fmt.Sprintf("revision limit %d of cluster %s reached, proceeding with a warning (at_limit: proceed); still asking for rework: %s",
		limit, c.Name, d.Reason)
	return d
}

// Replans reports whether decision d sends the work back for a replan
// under the cluster's on_error rule (before the replan limit is
// applied): d fails by a rule about missing usable reviews — gate,
// required, min_reviews or max_missing — and on_error is replan. A
// blocking reviewer's verdict and an invalid policy always fail.
func (c Cluster) Replans(d Decision) bool {
	if c.OnError != OnErrorReplan || d.Outcome != OutcomeFail {
		return false
	}
	switch d.Rule {
	case RuleGate, RuleRequired, RuleQuorum, RuleMaxMissing:
		return true
	}
	return false
}

// ApplyOnError applies the cluster's on_error rule to decision d of a
// phase, after replans replans by this cluster in the workflow: a
// decision that Replans becomes OutcomeReplan (same rule) while replans
// is below MaxReplans, and a proceed by RuleAtLimit with Warning set once
// it is not ("up to 3 replans, then on to release"). Every other
// decision is returned unchanged.
func (c Cluster) ApplyOnError(d Decision, replans int) Decision {
	if !c.Replans(d) {
		return d
	}
	if replans < c.MaxReplans {
		d.Outcome = OutcomeReplan
		d.Reason = fmt.Sprintf("%s; replan %d of %d (on_error: replan): back to the producer of the %s", d.Reason, replans+1, c.MaxReplans, c.ReplanType)
		return d
	}
	d.Outcome, d.Warning = OutcomeProceed, true
	d.Reason = fmt.Sprintf("replan limit %d of cluster %s reached, proceeding with a warning (on_error: replan); still failing: %s (rule %s)",
		c.MaxReplans, c.Name, d.Reason, d.Rule)
	d.Rule = RuleAtLimit
	return d
}

// Gated reports whether the gate reviewers of p decided the phase alone.
func (d Decision) Gated() bool { return d.Rule == RuleGate }

// gateCheck is Decide's gate step: the first gate reviewer (in reading
// order) without a usable, passing review fails the phase, and the other
// reviews are skipped ("V-Build gate fails → skip parallel V
// agents, declare V cluster ERROR"). ok is false when every gate passed.
func (d *Decision) gateCheck(p Policy, reads []reading, reworkRank int) (string, bool) {
	for _, rd := range reads {
		if !slices.Contains(p.Gate, rd.Agent) {
			continue
		}
		var what string
		switch {
		case !rd.usable():
			what = "has no usable review (" + rd.why() + ")"
		case rd.rejects:
			what = "rejects (" + string(rd.Status) + ")"
		case rd.rank <= reworkRank:
			what = "reported " + rd.CountedAs
		default:
			continue
		}
		var others []string
		for _, o := range reads {
			if o.Agent != rd.Agent {
				others = append(others, o.Agent)
			}
		}
		reason := fmt.Sprintf("gate reviewer %s %s", rd.Agent, what)
		if len(others) > 0 {
			reason += "; the other reviews are skipped (" + strings.Join(others, ", ") + ")"
		}
		if rd.usable() {
			d.Rejecting = []string{rd.Agent}
		} else {
			d.Rejecting = []string{}
		}
		return reason, true
	}
	return "", false
}
