package orchestrator

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// This file holds the claim lifecycle's consensus rules as pure functions:
// what a claim in pending_consensus does next, from what was read and the
// configuration, with no Redis in sight. ClaimAdvancer.consensus applies
// the result; the table tests in consensus_rule_test.go pin every branch.
//
// The rules (docs/design.md, "the claim lifecycle"):
//   - Before the bid deadline the claim waits for every asked agent.
//   - After it, an agent that was asked and did not answer counts as
//     ignore — unless its answer is still needed: no agent bid for work at
//     all, a required reviewer has not answered, fewer reviewers bid than
//     min_reviews while a configured reviewer has not answered, or the
//     kind of work its rules say it bids (review, claim, exclusive) has no
//     other bidder, so that work would be missing. Then
//     bids are requested again (with backoff), also from configured
//     consumers that were down when the claim was created and are alive
//     now, and after no_bid_timeout the claim fails naming the agents that
//     never answered.
//   - A claim ends "by configuration" (a dead end) only when no configured
//     agent could take it, or every consumer answered ignore.
//   - Otherwise the first phase with bidders is granted: review, then
//     parallel (claim), then exclusive, whose one winner is the lowest
//     agent name in byte order.

// consensusStep is what consensus does next.
type consensusStep int

const (
	// stepWait: asked agents may still answer before the deadline.
	stepWait consensusStep = iota
	// stepGrant: grant Phase to Agents (Silent count as ignore).
	stepGrant
	// stepEnd: no agent takes the artefact; Reason says why (by
	// configuration, or every consumer declined).
	stepEnd
	// stepAskAgain: request bids again from Ask (new ones join the
	// expected bidders) and look again in Delay.
	stepAskAgain
	// stepNoAnswer: the agents in Missing never answered within
	// no_bid_timeout; the claim fails naming them.
	stepNoAnswer
)

// consensusInput is what a consensus decision reads.
type consensusInput struct {
	// Expected are the agents asked to bid; Absent the configured
	// consumers that were not alive when the claim was created.
	Expected, Absent []string
	// Bids are the answers so far.
	Bids map[string]blackboard.Bid
	// Live reports whether an agent's cub is alive now.
	Live func(agent string) bool
	// Required are the reviewers whose review is required; Reviewers
	// the agents whose configured bid is review and who count toward
	// MinReviews (not advisory).
	Required, Reviewers map[string]bool
	MinReviews          int
	// Predicted is each consumer's bid as its configured rules give it
	// for this artefact (absent: not known in advance, a bid script). A
	// silent consumer whose predicted kind of work nobody else bid for is
	// needed: without it that work would be missing.
	Predicted map[string]blackboard.Bid
	// NowMs, DeadlineMs: the Redis clock and the current bid deadline.
	NowMs, DeadlineMs int64
	// Rounds and NoAnswerSinceMs: the claim's rounds of repeated bid
	// requests so far and when the first began (0: none).
	Rounds          int
	NoAnswerSinceMs int64
	BidTimeout      time.Duration
	NoBidTimeout    time.Duration
}

// consensusDecision is the step to take and what it needs.
type consensusDecision struct {
	Step consensusStep
	// Phase and Agents: the grant (stepGrant).
	Phase  phase
	Agents []string
	// Silent are the asked agents whose missing bid is recorded as
	// ignore with this step (stepGrant, stepEnd).
	Silent []string
	// Ask are the agents to request bids from again; NewExpected the
	// expected bidders afterwards (stepAskAgain).
	Ask, NewExpected []string
	// Delay is when to look again (stepAskAgain).
	Delay time.Duration
	// Missing are the agents whose answer is needed and still missing
	// (stepAskAgain, stepNoAnswer).
	Missing []string
	// Declined is set on stepEnd when consumers existed and all of them
	// answered ignore (false: no configured agent consumes the type).
	Declined bool
}

// maxBidRetryDelay caps the backoff between rounds of bid requests.
const maxBidRetryDelay = 30 * time.Second

// decideConsensus applies the consensus rules to in.
func decideConsensus(in consensusInput) consensusDecision {
	var silent []string
	for _, a := range in.Expected {
		if _, ok := in.Bids[a]; !ok {
			silent = append(silent, a)
		}
	}
	if len(silent) > 0 && in.NowMs < in.DeadlineMs {
		return consensusDecision{Step: stepWait}
	}
	// Unanswered: asked and silent, or absent and never asked since.
	unanswered := append([]string(nil), silent...)
	for _, a := range in.Absent {
		if _, ok := in.Bids[a]; !ok && !contains(in.Expected, a) {
			unanswered = append(unanswered, a)
		}
	}
	positive, reviews := 0, 0
	offered := map[blackboard.Bid]bool{}
	for agent, b := range in.Bids {
		if b == blackboard.BidIgnore || !b.Valid() {
			continue
		}
		positive++
		offered[b] = true
		if b == blackboard.BidReview && in.Reviewers[agent] {
			reviews++
		}
	}
	var needed []string
	for _, a := range unanswered {
		switch {
		case positive == 0, in.Required[a], reviews < in.MinReviews && in.Reviewers[a]:
			needed = append(needed, a)
		default:
			if p, ok := in.Predicted[a]; ok && p != blackboard.BidIgnore && p.Valid() && !offered[p] {
				needed = append(needed, a)
			}
		}
	}
	sort.Strings(needed)
	if len(needed) > 0 {
		since := in.NoAnswerSinceMs
		if since == 0 {
			since = in.NowMs
		}
		left := in.NoBidTimeout - time.Duration(in.NowMs-since)*time.Millisecond
		if left <= 0 {
			return consensusDecision{Step: stepNoAnswer, Missing: needed}
		}
		d := consensusDecision{Step: stepAskAgain, Missing: needed, NewExpected: append([]string(nil), in.Expected...)}
		for _, a := range needed {
			if !in.Live(a) {
				continue // down: asked when it is back (a later round)
			}
			d.Ask = append(d.Ask, a)
			if !contains(d.NewExpected, a) {
				d.NewExpected = append(d.NewExpected, a)
			}
		}
		d.Delay = min(bidRetryDelay(in.Rounds, in.BidTimeout), left)
		return d
	}
	bids := make(map[string]blackboard.Bid, len(in.Bids))
	for a, b := range in.Bids {
		bids[a] = b
	}
	if p, agents, ok := nextPhase(phaseReview, bids); ok {
		return consensusDecision{Step: stepGrant, Phase: p, Agents: agents, Silent: silent}
	}
	return consensusDecision{Step: stepEnd, Silent: silent, Declined: len(in.Expected)+len(in.Absent) > 0}
}

// nextPhase is the first phase at or after from that has bidders, with the
// agents it grants: all review or all claim bidders, or the one exclusive
// bidder with the lowest name (byte order). ok is false when no phase is
// left.
func nextPhase(from phase, bids map[string]blackboard.Bid) (phase, []string, bool) {
	for p := from; p < phaseCount; p++ {
		var agents []string
		for agent, b := range bids {
			if b == phaseInfo[p].bid {
				agents = append(agents, agent)
			}
		}
		if len(agents) == 0 {
			continue
		}
		sort.Strings(agents)
		if p == phaseExclusive {
			agents = agents[:1]
		}
		return p, agents, true
	}
	return phaseCount, nil, false
}

// bidRetryDelay is how long round number rounds (0 for the first repeat)
// of bid requests waits for answers: the bid timeout, doubled each round,
// at most maxBidRetryDelay.
func bidRetryDelay(rounds int, bidTimeout time.Duration) time.Duration {
	d := bidTimeout
	if d <= 0 {
		d = time.Second
	}
	for i := 0; i < rounds && d < maxBidRetryDelay; i++ {
		d *= 2
	}
	return min(d, maxBidRetryDelay)
}

// chainEndNote is the outcome's words for a branch that ended without
// work: "Plan: no agent consumes this type", or the consumers that
// declined it.
func chainEndNote(typ string, declined bool, decliners []string) string {
	if typ == "" {
		typ = "artefact"
	}
	if !declined {
		return typ + ": no agent consumes this type"
	}
	return fmt.Sprintf("%s: every consumer declined it (%s)", typ, strings.Join(decliners, ", "))
}

// noAnswerReason is the failure reason of a claim whose needed agents never
// answered within waited; live says which of them have a cub alive now.
func noAnswerReason(typ string, missing []string, waited time.Duration, live func(string) bool) string {
	parts := make([]string, 0, len(missing))
	for _, a := range missing {
		if live(a) {
			parts = append(parts, a+" (alive, but never answered)")
		} else {
			parts = append(parts, a+" (not running)")
		}
	}
	if typ == "" {
		typ = "artefact"
	}
	return fmt.Sprintf("no answer from %s on the %s after %s: start the missing agents, or remove them from sett.yml if they are not needed",
		strings.Join(parts, ", "), typ, waited.Round(time.Second))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
