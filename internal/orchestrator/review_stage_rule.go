package orchestrator

import (
	"slices"
	"sort"
	"time"
)

// This file holds the review phase's own steps as pure functions (issue
// 28), beside the consensus rules: which reviewers are asked first, what a
// phase whose granted reviewers all answered does next, and when an
// advisory reviewer that has not answered is skipped. ClaimAdvancer
// applies them; review_stage_rule_test.go pins every branch.
//
// The rules (docs/review-clusters.md):
//   - Gate first. When a cluster names gate reviewers and some of them bid
//     to review beside other reviewers, only the gate reviewers are granted
//     at first. The others are granted when every gate passed, and never
//     asked when a gate decided the phase (its failure, ERROR or
//     rejection): their tools never run.
//   - An answered ERROR is asked once more. A non-advisory reviewer whose
//     review reads as status ERROR is granted again once (the ERROR review
//     stays in the trail) before the cluster's rules read its ERROR as a
//     failed review. This comes before the gate: a gate's ERROR is asked
//     again too before it decides.
//   - An advisory reviewer has its own deadline: once every other granted
//     reviewer answered and an advisory one has not within its deadline
//     (counted from the grant's delivery to it), it is skipped with a
//     note, its grant withdrawn; it never delays the decision beyond it.

// firstReviewers is who a review phase grants first out of the review
// bidders: the gate reviewers among them when others bid too, else all.
func firstReviewers(bidders, gate []string) []string {
	var gates []string
	for _, b := range bidders {
		if slices.Contains(gate, b) {
			gates = append(gates, b)
		}
	}
	if len(gates) == 0 || len(gates) == len(bidders) {
		return bidders
	}
	return gates
}

// reviewStep is what a review phase whose granted reviewers all answered
// (or are skipped) does next.
type reviewStep int

const (
	// reviewDecide: the cluster's decision over the reviews read applies.
	reviewDecide reviewStep = iota
	// reviewAskAgain: grant Agents again (their answers were ERROR, for
	// the first time).
	reviewAskAgain
	// reviewGrantRest: every gate passed; grant Agents, the reviewers
	// not asked yet.
	reviewGrantRest
	// reviewGateDecided: a gate decided the phase; Agents, the reviewers
	// not asked yet, are skipped and never asked.
	reviewGateDecided
)

// reviewStageInput is what nextReviewStep reads.
type reviewStageInput struct {
	// Bidders are the agents that bid review; Granted those granted so far.
	Bidders, Granted []string
	// Errored are granted, non-advisory reviewers whose delivered review
	// reads as status ERROR; Retried those already asked again after an
	// ERROR answer in this phase.
	Errored, Retried map[string]bool
	// Gated: the cluster's decision over the granted reviews was made by a
	// gate reviewer (reviewpolicy.RuleGate).
	Gated bool
}

// reviewStageDecision is the step and the agents it concerns (sorted).
type reviewStageDecision struct {
	Step   reviewStep
	Agents []string
}

// nextReviewStep applies the review phase's rules to in.
func nextReviewStep(in reviewStageInput) reviewStageDecision {
	var again []string
	for _, a := range in.Granted {
		if in.Errored[a] && !in.Retried[a] {
			again = append(again, a)
		}
	}
	if len(again) > 0 {
		sort.Strings(again)
		return reviewStageDecision{Step: reviewAskAgain, Agents: again}
	}
	var rest []string
	for _, a := range in.Bidders {
		if !slices.Contains(in.Granted, a) {
			rest = append(rest, a)
		}
	}
	sort.Strings(rest)
	switch {
	case len(rest) == 0:
		return reviewStageDecision{Step: reviewDecide}
	case in.Gated:
		return reviewStageDecision{Step: reviewGateDecided, Agents: rest}
	}
	return reviewStageDecision{Step: reviewGrantRest, Agents: rest}
}

// advisoryWait is what overdueAdvisory concluded about the review phase's
// missing reviewers.
type advisoryWait struct {
	// Skip are the advisory reviewers past their deadline (sorted): the
	// phase goes on without them. Set only when every missing reviewer is
	// advisory and past it.
	Skip []string
	// Next is when the first deadline of a missing advisory reviewer
	// passes (0: none is running, or Skip is set).
	Next time.Duration
}

// overdueAdvisory decides about a review phase's missing reviewers:
// deadline gives each advisory reviewer's deadline (absent: not advisory),
// deliveredAtMs when its grant reached it (absent: still queued behind
// its capacity, which counts from grantedAtMs, the phase's grant).
func overdueAdvisory(missing []string, deadline map[string]time.Duration, deliveredAtMs map[string]int64, grantedAtMs, nowMs int64) advisoryWait {
	var skip []string
	var w advisoryWait
	waiting := false
	for _, a := range missing {
		d, ok := deadline[a]
		if !ok || d <= 0 {
			waiting = true // a non-advisory reviewer is still awaited
			continue
		}
		from, ok := deliveredAtMs[a]
		if !ok || from <= 0 {
			from = grantedAtMs
		}
		left := time.Duration(from-nowMs)*time.Millisecond + d
		if left <= 0 {
			skip = append(skip, a)
			continue
		}
		if w.Next == 0 || left < w.Next {
			w.Next = left
		}
	}
	if waiting || w.Next > 0 || len(skip) == 0 {
		return advisoryWait{Next: w.Next}
	}
	sort.Strings(skip)
	return advisoryWait{Skip: skip}
}
