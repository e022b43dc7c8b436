package orchestrator

import (
	"sync"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
)

// maxCachedPlans bounds planCache: artefact types are the user's, so the
// (type, producer role) pairs seen are not bounded by the configuration.
const maxCachedPlans = 1024

// planCache keeps the bid plan of each (artefact type, producer role) for
// the live set of agents it was computed from. The plan is a function of
// the type, the role, the configured rules and the live set alone, and
// computing it walks every configured agent (a bidding.Rules match each):
// with 100 agents that was ≈ 0.1 ms of orchestrator CPU on every claim,
// on the hop's path. Cached, a claim's plan costs a map lookup whatever
// the number of agents (issue 34); a liveness change (a new generation of
// the directory) drops every plan.
//
// Safe for concurrent use. The plans it returns are shared: read-only.
type planCache struct {
	dir   *AgentDirectory
	rules map[string]bidding.Rules
	// decide records the bids the rules decide instead of asking
	// (bidPlan.decideRules).
	decide bool

	mu    sync.Mutex
	gen   uint64
	plans map[planKey]*cachedPlan
}

type planKey struct{ typ, role string }

// cachedPlan is a plan with what every claim derives from it alike.
type cachedPlan struct {
	plan bidPlan
	// bids are the bids recorded at creation (bidPlan.decided).
	bids map[string]blackboard.Bid
	// fields are the bids_decided event's fields, nil when there is no
	// such event; copy before changing.
	fields map[string]string
}

func newPlanCache(dir *AgentDirectory, rules map[string]bidding.Rules, decide bool) *planCache {
	return &planCache{dir: dir, rules: rules, decide: decide, plans: map[planKey]*cachedPlan{}}
}

// get returns the plan for an artefact of type typ produced by role under
// the directory's current live set.
func (c *planCache) get(typ, role string) *cachedPlan {
	// The generation is read before the live set (planBids reads it): a
	// change in between stores a plan newer than its generation, which
	// the next call, seeing the new generation, drops. A plan older than
	// the live set it is served for is never returned.
	gen := c.dir.Generation()
	k := planKey{typ, role}
	c.mu.Lock()
	if gen != c.gen || len(c.plans) >= maxCachedPlans {
		c.gen, c.plans = gen, map[planKey]*cachedPlan{}
	}
	p, ok := c.plans[k]
	c.mu.Unlock()
	if ok {
		return p
	}
	plan := planBids(c.dir, c.rules, typ, role)
	if c.decide {
		plan = plan.decideRules(c.rules, typ, role)
	}
	p = &cachedPlan{plan: plan, bids: plan.decided()}
	if ev := plan.event("", "", ""); len(ev) > 0 {
		p.fields = ev[0].Fields
	}
	c.mu.Lock()
	if gen == c.gen {
		c.plans[k] = p
	}
	c.mu.Unlock()
	return p
}

// event is the bids_decided event of claimID, or nil.
func (p *cachedPlan) event(claimID, artefactID, workflowID string) []blackboard.Event {
	if p.fields == nil {
		return nil
	}
	fields := make(map[string]string, len(p.fields))
	for k, v := range p.fields {
		fields[k] = v
	}
	return []blackboard.Event{{Type: blackboard.EventBidsDecided, WorkflowID: workflowID,
		ClaimID: claimID, ArtefactID: artefactID, Fields: fields}}
}
