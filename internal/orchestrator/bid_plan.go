package orchestrator

import (
	"sort"
	"strings"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
)

// bidPlan is who is asked to bid on an artefact and who is not: live
// agents whose static rules already say ignore get their bid recorded at
// once instead of a bid request (a pipeline of specialised agents then
// costs no round trips for the agents an artefact does not concern), and
// configured consumers that are not alive are remembered as absent, so
// that consensus can wait for them when their answer is needed.
type bidPlan struct {
	Bidders  []string
	Ignoring []string
	// Decided are live agents whose rules alone give a bid other than
	// ignore (no bid script, not a reviewer), recorded at once instead
	// of asked unless orchestrator.decide_rule_bids is off (decideRules).
	Decided map[string]blackboard.Bid
	// Outranked are the other live agents whose rules decide an exclusive
	// bid: the exclusive winner is the lowest name, so theirs can never
	// win over Decided's. Their bids are named in the bids_decided event
	// but not stored with the claim, so that a claim's stored bids do not
	// grow with the agents consuming its type (issue 34: 100 bid fields
	// doubled create_claim's cost).
	Outranked []string
	Absent    []string
}

// decideRules moves the bidders whose claim or exclusive bid follows from
// their rules alone (no bid_script) out of Bidders into Decided: their
// bids are recorded at creation like the ignores, and nobody asks them.
// Of several decided exclusive bids only the lowest name's is kept; the
// others are Outranked.
// Every agent that would have answered by its rules costs Redis a bid
// request, a wake-up and a submit_bid script per claim, so with M such
// agents a claim cost grew by M scripts (issue 34). Reviewers are still
// asked: review roles and clusters count who answered.
func (p bidPlan) decideRules(rules map[string]bidding.Rules, typ, role string) bidPlan {
	var asked []string
	for _, agent := range p.Bidders {
		r, ok := rules[agent]
		if ok {
			if bid, _, sure := r.Static(typ, role); sure && (bid == blackboard.BidClaim || bid == blackboard.BidExclusive) {
				if p.Decided == nil {
					p.Decided = map[string]blackboard.Bid{}
				}
				p.Decided[agent] = bid
				continue
			}
		}
		asked = append(asked, agent)
	}
	p.Bidders = asked
	var exclusive []string
	for agent, bid := range p.Decided {
		if bid == blackboard.BidExclusive {
			exclusive = append(exclusive, agent)
		}
	}
	if len(exclusive) > 1 {
		sort.Strings(exclusive)
		for _, agent := range exclusive[1:] {
			delete(p.Decided, agent)
		}
		p.Outranked = exclusive[1:]
	}
	return p
}

// planBids decides the bid plan for an artefact of type typ produced by
// role, over the configured agents in dir.
func planBids(dir *AgentDirectory, rules map[string]bidding.Rules, typ, role string) bidPlan {
	var p bidPlan
	live := make(map[string]bool)
	for _, agent := range dir.Live() {
		live[agent] = true
	}
	for _, agent := range dir.Names() {
		if r, ok := rules[agent]; ok {
			if bid, _, sure := r.Static(typ, role); sure && bid == blackboard.BidIgnore {
				if live[agent] {
					p.Ignoring = append(p.Ignoring, agent)
				}
				continue
			}
		}
		if !live[agent] {
			p.Absent = append(p.Absent, agent)
			continue
		}
		p.Bidders = append(p.Bidders, agent)
	}
	return p
}

// decided returns the bids recorded without asking: the ignores and the
// rule-decided bids (the outranked exclusive ones left out).
func (p bidPlan) decided() map[string]blackboard.Bid {
	m := make(map[string]blackboard.Bid, len(p.Ignoring)+len(p.Decided))
	for _, a := range p.Ignoring {
		m[a] = blackboard.BidIgnore
	}
	for a, b := range p.Decided {
		m[a] = b
	}
	return m
}

// requests builds the bid requests of the plan for claim claimID.
func (p bidPlan) requests(claimID, workflowID string, target bidTarget) []blackboard.InboxMessage {
	inbox := make([]blackboard.InboxMessage, len(p.Bidders))
	for i, agent := range p.Bidders {
		inbox[i] = blackboard.InboxMessage{
			Agent: agent, Kind: blackboard.MessageBidRequest, ClaimID: claimID,
			ArtefactID: target.ID, WorkflowID: workflowID,
			ArtefactType: target.Type, StructuralType: target.StructuralType,
			ProducedByRole: target.ProducedByRole,
		}
	}
	return inbox
}

// event is the bids_decided event recording the ignores, or nil.
func (p bidPlan) event(claimID, artefactID, workflowID string) []blackboard.Event {
	if len(p.Ignoring) == 0 && len(p.Decided) == 0 {
		return nil
	}
	fields := map[string]string{"reason": "the agents' rules exclude this artefact"}
	if len(p.Ignoring) > 0 {
		fields["ignore"] = strings.Join(p.Ignoring, ",")
	}
	if len(p.Decided) > 0 {
		// agent=bid pairs, sorted by agent, the outranked included.
		pairs := make([]string, 0, len(p.Decided)+len(p.Outranked))
		for a, b := range p.Decided {
			pairs = append(pairs, a+"="+string(b))
		}
		for _, a := range p.Outranked {
			pairs = append(pairs, a+"="+string(blackboard.BidExclusive))
		}
		sort.Strings(pairs)
		fields["bids"] = strings.Join(pairs, ",")
		fields["reason"] = "the agents' rules decide their bids"
		if len(p.Ignoring) > 0 {
			fields["reason"] = "the agents' rules exclude this artefact or decide their bids"
		}
	}
	return []blackboard.Event{{Type: blackboard.EventBidsDecided, WorkflowID: workflowID,
		ClaimID: claimID, ArtefactID: artefactID, Fields: fields}}
}

// bidTarget is what a bid request tells an agent about the artefact.
type bidTarget struct {
	ID             string
	Type           string
	StructuralType blackboard.StructuralType
	ProducedByRole string
}
