package orchestrator

import (
	"strings"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/pkg/blackboard"
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
	Absent   []string
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

// decided returns the recorded ignores as bids.
func (p bidPlan) decided() map[string]blackboard.Bid {
	m := make(map[string]blackboard.Bid, len(p.Ignoring))
	for _, a := range p.Ignoring {
		m[a] = blackboard.BidIgnore
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
	if len(p.Ignoring) == 0 {
		return nil
	}
	return []blackboard.Event{{Type: blackboard.EventBidsDecided, WorkflowID: workflowID,
		ClaimID: claimID, ArtefactID: artefactID,
		Fields: map[string]string{"ignore": strings.Join(p.Ignoring, ","), "reason": "the agents' rules exclude this artefact"}}}
}

// bidTarget is what a bid request tells an agent about the artefact.
type bidTarget struct {
	ID             string
	Type           string
	StructuralType blackboard.StructuralType
	ProducedByRole string
}
