// Package provenance reads one workflow's provenance and arranges it:
// artefacts in threads (the versions of one logical artefact), threads
// hung under the artefact they were derived from, claims with their bids,
// phases, review decisions, approvals and failures, the review verdicts
// read as the review policy reads them, the workflow's learnings and its
// dead ends. `sett hoard -o tree` draws it as a text tree and the web
// console (`sett ui`) as an SVG graph; both render this one structure.
package provenance

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/reviewpolicy"
)

// Workflow is one workflow's provenance.
type Workflow struct {
	WF *blackboard.Workflow
	// Arts are the artefacts, oldest first (creation time, then id).
	Arts []*blackboard.Artefact
	// ByID finds an artefact by id.
	ByID map[string]*blackboard.Artefact
	// Threads maps a logical id to its versions, oldest first;
	// ThreadOrder lists the logical ids by their first version's creation.
	Threads     map[string][]*blackboard.Artefact
	ThreadOrder []string
	// Children maps an artefact id to the threads derived from it (whose
	// first version names it as first source).
	Children map[string][]string
	// Roots are the threads with no parent: the goal, and anything whose
	// first source is not part of the workflow (hung under the goal when
	// the goal is there).
	Roots []string
	// Claims maps an artefact id to its claims: the regular one, then
	// feedback claims by iteration. ClaimList holds them all by creation.
	Claims    map[string][]*blackboard.Claim
	ClaimList []*blackboard.Claim
	// Bids maps a claim id to its bids (agent → bid); empty unless the
	// bids were loaded.
	Bids map[string]map[string]blackboard.Bid
	// Learnings are the lessons recorded from this workflow's rejections.
	Learnings []blackboard.Learning
	// Truncated is true when Load stopped at its artefact limit.
	Truncated bool
}

// Options bound what Load reads.
type Options struct {
	// MaxArtefacts bounds the artefacts read (the newest are kept); zero
	// reads them all (a workflow is bounded by max_workflow_artefacts).
	MaxArtefacts int
	// Bids and Learnings also read each claim's bids (one pipelined round
	// trip) and the learnings recorded from the workflow's rejected claims
	// (one HMGET).
	Bids, Learnings bool
}

// Load reads a workflow with its artefacts (through its time index,
// pipelined pages) and claims, and arranges them.
func Load(ctx context.Context, bb *blackboard.Client, workflowID string, o Options) (*Workflow, error) {
	wf, err := bb.GetWorkflow(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	arts, truncated, err := LoadArtefacts(ctx, bb, workflowID, o.MaxArtefacts)
	if err != nil {
		return nil, err
	}
	claimIDs, err := bb.WorkflowClaims(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	claims, err := bb.GetClaims(ctx, claimIDs)
	if err != nil {
		return nil, err
	}
	p := Build(wf, arts, claims)
	p.Truncated = truncated
	if o.Bids {
		ids := make([]string, len(p.ClaimList))
		for i, c := range p.ClaimList {
			ids[i] = c.ID
		}
		bids, err := bb.GetBidsOf(ctx, ids)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			p.Bids[id] = bids[i]
		}
	}
	if o.Learnings {
		// A rejected claim's learning is named after the claim.
		ids := make([]string, len(p.ClaimList))
		for i, c := range p.ClaimList {
			ids[i] = blackboard.DeriveID("learning", c.ID)
		}
		if p.Learnings, err = bb.GetLearnings(ctx, ids); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// LoadArtefacts reads a workflow's artefacts through its time index
// (newest first, pages of up to 1000, one pipelined read each), at most
// max of them (zero: all; the newest are kept), and returns them oldest
// first; truncated says the limit cut older ones off.
func LoadArtefacts(ctx context.Context, bb *blackboard.Client, workflowID string, max int) (arts []*blackboard.Artefact, truncated bool, err error) {
	q := blackboard.PageQuery{WorkflowID: workflowID, Limit: 1000}
	for {
		if max > 0 {
			q.Limit = int64(min(1000, max-len(arts)+1))
		}
		page, err := bb.ListArtefacts(ctx, q)
		if err != nil {
			return nil, false, err
		}
		ids := page.IDs
		if max > 0 && len(arts)+len(ids) > max {
			ids, truncated = ids[:max-len(arts)], true
		}
		got, err := bb.GetArtefacts(ctx, ids)
		if err != nil {
			return nil, false, err
		}
		for _, a := range got {
			if a != nil {
				arts = append(arts, a)
			}
		}
		if page.Next == "" || truncated {
			break
		}
		q.Cursor = page.Next
	}
	SortOldestFirst(arts)
	return arts, truncated, nil
}

// SortOldestFirst orders artefacts by creation time, then id.
func SortOldestFirst(arts []*blackboard.Artefact) {
	sort.SliceStable(arts, func(i, j int) bool {
		if arts[i].CreatedAtMs != arts[j].CreatedAtMs {
			return arts[i].CreatedAtMs < arts[j].CreatedAtMs
		}
		return arts[i].ID < arts[j].ID
	})
}

// Build arranges artefacts (any order) and claims (nil entries skipped).
func Build(wf *blackboard.Workflow, arts []*blackboard.Artefact, claims []*blackboard.Claim) *Workflow {
	p := &Workflow{
		WF:       wf,
		Arts:     append([]*blackboard.Artefact(nil), arts...),
		ByID:     map[string]*blackboard.Artefact{},
		Threads:  map[string][]*blackboard.Artefact{},
		Children: map[string][]string{},
		Claims:   map[string][]*blackboard.Claim{},
		Bids:     map[string]map[string]blackboard.Bid{},
	}
	SortOldestFirst(p.Arts)
	for _, a := range p.Arts {
		p.ByID[a.ID] = a
		if _, ok := p.Threads[a.LogicalID]; !ok {
			p.ThreadOrder = append(p.ThreadOrder, a.LogicalID)
		}
		p.Threads[a.LogicalID] = append(p.Threads[a.LogicalID], a)
	}
	for _, vs := range p.Threads {
		sort.SliceStable(vs, func(i, j int) bool { return vs[i].Version < vs[j].Version })
	}
	for _, logical := range p.ThreadOrder {
		first := p.Threads[logical][0]
		parent := ""
		if len(first.SourceArtefacts) > 0 {
			if src, ok := p.ByID[first.SourceArtefacts[0]]; ok && src.LogicalID != logical {
				parent = src.ID
			}
		}
		if parent == "" && !first.IsGoal() && wf != nil {
			if _, ok := p.ByID[wf.ID]; ok {
				parent = wf.ID // an orphan still belongs to the goal's story
			}
		}
		if parent == "" {
			p.Roots = append(p.Roots, logical)
		} else {
			p.Children[parent] = append(p.Children[parent], logical)
		}
	}
	for _, c := range claims {
		if c != nil {
			p.Claims[c.ArtefactID] = append(p.Claims[c.ArtefactID], c)
			p.ClaimList = append(p.ClaimList, c)
		}
	}
	for _, cs := range p.Claims {
		sort.SliceStable(cs, func(i, j int) bool {
			if cs[i].IsFeedback() != cs[j].IsFeedback() {
				return !cs[i].IsFeedback()
			}
			if cs[i].Iteration != cs[j].Iteration {
				return cs[i].Iteration < cs[j].Iteration
			}
			return cs[i].CreatedAtMs < cs[j].CreatedAtMs
		})
	}
	sort.SliceStable(p.ClaimList, func(i, j int) bool { return p.ClaimList[i].CreatedAtMs < p.ClaimList[j].CreatedAtMs })
	return p
}

// Claim is the regular (first) claim on an artefact, or nil.
func (p *Workflow) Claim(artefactID string) *blackboard.Claim {
	if cs := p.Claims[artefactID]; len(cs) > 0 {
		return cs[0]
	}
	return nil
}

// Latest reports whether a is the newest version of its thread here.
func (p *Workflow) Latest(a *blackboard.Artefact) bool {
	vs := p.Threads[a.LogicalID]
	return len(vs) > 0 && vs[len(vs)-1].ID == a.ID
}

// DeadEnd reports whether a is a dead-ended branch: a failure, or work
// whose claim was terminated (failed, rejected, timed out, no consumer)
// and not taken up again by a newer version of its thread.
func (p *Workflow) DeadEnd(a *blackboard.Artefact) bool {
	if a.StructuralType == blackboard.StructuralFailure {
		return true
	}
	c := p.Claim(a.ID)
	if c == nil || c.Status != blackboard.ClaimTerminated {
		return false
	}
	return p.Latest(a)
}

// Learned lists the learnings recorded from a's rejection.
func (p *Workflow) Learned(artefactID string) []blackboard.Learning {
	var out []blackboard.Learning
	for _, l := range p.Learnings {
		if l.ArtefactID == artefactID {
			out = append(out, l)
		}
	}
	return out
}

// BidText summarises a claim's bids: "2 bids: exclusive planner,
// review reviewer" (ignores counted, not named); "" when none.
func (p *Workflow) BidText(claimID string) string {
	bids := p.Bids[claimID]
	if len(bids) == 0 {
		return ""
	}
	agents := make([]string, 0, len(bids))
	for a := range bids {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	var parts []string
	ignored := 0
	for _, a := range agents {
		if bids[a] == blackboard.BidIgnore {
			ignored++
			continue
		}
		parts = append(parts, string(bids[a])+" "+a)
	}
	if ignored > 0 {
		parts = append(parts, strconv.Itoa(ignored)+" ignored")
	}
	n := "bids"
	if len(bids) == 1 {
		n = "bid"
	}
	return strconv.Itoa(len(bids)) + " " + n + ": " + strings.Join(parts, ", ")
}

// DecisionOutcome is the outcome word of a claim's review decision
// ("proceed", "rework", "terminate"), read from the review policy's line
// ("review decision: rework (rule): reason"); the line itself when it has
// another shape.
func DecisionOutcome(line string) string {
	rest, ok := strings.CutPrefix(line, "review decision: ")
	if !ok {
		return line
	}
	if i := strings.IndexAny(rest, " (:"); i > 0 {
		return rest[:i]
	}
	return rest
}

// Judge reads a review with the memory its author left, as the review
// policy does.
func Judge(a *blackboard.Artefact) reviewpolicy.Verdict {
	var m *memory.AgentMemory
	if a.Memory != "" {
		var doc memory.AgentMemory
		if json.Unmarshal([]byte(a.Memory), &doc) == nil {
			m = &doc
		}
	}
	return reviewpolicy.Judge(a.Payload, m)
}

// VerdictText is a review's verdict in words: "✓ approve", "✗ reject
// (major)".
func VerdictText(a *blackboard.Artefact) string {
	v := Judge(a)
	s := "✗ reject"
	if v.Approves() {
		s = "✓ approve"
	}
	if v.Severity != "" {
		s += " (" + v.Severity + ")"
	}
	return s
}

// Producer names who wrote a: the agent, else the role.
func Producer(a *blackboard.Artefact) string {
	if a.ProducedByAgent != "" {
		return a.ProducedByAgent
	}
	return a.ProducedByRole
}
