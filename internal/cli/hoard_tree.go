package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/reviewpolicy"
	"github.com/settdev/sett/internal/textcut"
	"github.com/settdev/sett/pkg/blackboard"
)

// loadWorkflowArtefacts reads every artefact of a workflow through its
// time index (pages of 1000, one pipelined read each), oldest first.
// Workflows are bounded by max_workflow_artefacts, so this stays small.
func loadWorkflowArtefacts(ctx context.Context, bb *blackboard.Client, workflowID string) ([]*blackboard.Artefact, error) {
	var out []*blackboard.Artefact
	q := blackboard.PageQuery{WorkflowID: workflowID, Limit: 1000}
	for {
		page, err := bb.ListArtefacts(ctx, q)
		if err != nil {
			return nil, err
		}
		arts, err := bb.GetArtefacts(ctx, page.IDs)
		if err != nil {
			return nil, err
		}
		for _, a := range arts {
			if a != nil {
				out = append(out, a)
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	sortOldestFirst(out)
	return out, nil
}

// provenance is one workflow arranged as a tree: every thread (all
// versions of one logical artefact) hangs under the artefact its first
// version was derived from (its first source).
type provenance struct {
	wf      *blackboard.Workflow
	arts    map[string]*blackboard.Artefact
	threads map[string][]*blackboard.Artefact // logical id → versions, oldest first
	// children maps an artefact id to the threads derived from it.
	children map[string][]string
	// claims maps an artefact id to its claims: the regular one, then
	// feedback claims by iteration.
	claims map[string][]*blackboard.Claim
	// roots are the threads with no parent: the goal, and anything whose
	// first source is not part of the workflow.
	roots []string
	// mark is an artefact to point out ("◀"), or "".
	mark string
}

// loadProvenance reads a workflow with its artefacts and claims.
func loadProvenance(ctx context.Context, bb *blackboard.Client, workflowID string) (*provenance, error) {
	wf, err := bb.GetWorkflow(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	arts, err := loadWorkflowArtefacts(ctx, bb, workflowID)
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
	return buildProvenance(wf, arts, claims), nil
}

// buildProvenance arranges artefacts (oldest first) and claims.
func buildProvenance(wf *blackboard.Workflow, arts []*blackboard.Artefact, claims []*blackboard.Claim) *provenance {
	p := &provenance{
		wf:       wf,
		arts:     map[string]*blackboard.Artefact{},
		threads:  map[string][]*blackboard.Artefact{},
		children: map[string][]string{},
		claims:   map[string][]*blackboard.Claim{},
	}
	var order []string // thread ids by the creation of their first version
	for _, a := range arts {
		p.arts[a.ID] = a
		if _, ok := p.threads[a.LogicalID]; !ok {
			order = append(order, a.LogicalID)
		}
		p.threads[a.LogicalID] = append(p.threads[a.LogicalID], a)
	}
	for _, vs := range p.threads {
		sort.Slice(vs, func(i, j int) bool { return vs[i].Version < vs[j].Version })
	}
	for _, logical := range order {
		first := p.threads[logical][0]
		parent := ""
		if len(first.SourceArtefacts) > 0 {
			if src, ok := p.arts[first.SourceArtefacts[0]]; ok && src.LogicalID != logical {
				parent = src.ID
			}
		}
		if parent == "" && !first.IsGoal() {
			if _, ok := p.arts[wf.ID]; ok {
				parent = wf.ID // an orphan still belongs to the goal's story
			}
		}
		if parent == "" {
			p.roots = append(p.roots, logical)
		} else {
			p.children[parent] = append(p.children[parent], logical)
		}
	}
	for _, c := range claims {
		if c != nil {
			p.claims[c.ArtefactID] = append(p.claims[c.ArtefactID], c)
		}
	}
	for _, cs := range p.claims {
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
	return p
}

// header describes the workflow in one line.
func (p *provenance) header(style outputStyle) string {
	status := style.paint(workflowColour(p.wf.Status), string(p.wf.Status))
	s := fmt.Sprintf("Workflow %s  %s", p.wf.ID, status)
	if p.wf.Outcome != "" {
		s += ": " + oneLine(p.wf.Outcome)
	}
	s += fmt.Sprintf("  · started %s · %d artefact(s) · score %d", stamp(style.Now(), msTime(p.wf.StartedAtMs)), len(p.arts), p.wf.Priority)
	if p.wf.Tokens > 0 {
		s += fmt.Sprintf(" · tokens %d (%s)", p.wf.Tokens, agentTokensText(p.wf.AgentTokens))
	}
	return s
}

// nodes builds the tree: one node per root thread.
func (p *provenance) nodes() []*treeNode {
	var out []*treeNode
	for _, logical := range p.roots {
		out = append(out, p.threadNode(logical))
	}
	return out
}

// threadNode is one thread: the artefact itself when it has one version,
// else a "Type v1 → v2" node with one child per version.
func (p *provenance) threadNode(logical string) *treeNode {
	vs := p.threads[logical]
	if len(vs) == 1 {
		n := p.artefactNode(vs[0], true)
		return n
	}
	labels := make([]string, len(vs))
	for i, v := range vs {
		labels[i] = fmt.Sprintf("v%d", v.Version)
	}
	first := vs[0]
	n := &treeNode{
		text:   fmt.Sprintf("%s %s  thread %s  by %s", first.Type, strings.Join(labels, " → "), blackboard.ShortID(logical), producer(first)),
		colour: colourBold,
	}
	for _, v := range vs {
		n.children = append(n.children, p.artefactNode(v, false))
	}
	return n
}

// artefactNode is one artefact with its claims and the threads derived
// from it.
func (p *provenance) artefactNode(a *blackboard.Artefact, withType bool) *treeNode {
	n := &treeNode{text: artefactLine(a, withType), colour: artefactColour(a)}
	if a.ID == p.mark {
		n.text += "  ◀"
	}
	for _, c := range p.claims[a.ID] {
		n.children = append(n.children, claimNode(c))
	}
	for _, logical := range p.children[a.ID] {
		n.children = append(n.children, p.threadNode(logical))
	}
	// The review policy's decision reads after the reviews it weighed.
	for _, c := range p.claims[a.ID] {
		if c.ReviewDecision != "" {
			n.children = append(n.children, &treeNode{text: "review decision (claim " + blackboard.ShortID(c.ID) + "): " + oneLine(c.ReviewDecision),
				colour: colourMagenta})
		}
	}
	return n
}

// artefactLine describes an artefact: type, short id, version, verdict
// for reviews, FAILURE for failures, producer and summary.
func artefactLine(a *blackboard.Artefact, withType bool) string {
	var b strings.Builder
	switch {
	case a.StructuralType == blackboard.StructuralFailure:
		fmt.Fprintf(&b, "FAILURE %s %s", a.Type, blackboard.ShortID(a.ID))
	case withType:
		fmt.Fprintf(&b, "%s %s", a.Type, blackboard.ShortID(a.ID))
	default:
		fmt.Fprintf(&b, "v%d %s", a.Version, blackboard.ShortID(a.ID))
	}
	if withType && a.Version > 1 {
		fmt.Fprintf(&b, " v%d", a.Version)
	}
	if a.StructuralType == blackboard.StructuralReview {
		b.WriteString("  " + verdictText(a))
	}
	fmt.Fprintf(&b, "  by %s", producer(a))
	if s := oneLine(a.Summary); s != "" {
		fmt.Fprintf(&b, "  %q", textcut.Runes(s, 70))
	}
	return b.String()
}

// verdictText reads a review the way the orchestrator does.
func verdictText(a *blackboard.Artefact) string {
	v := judge(a)
	s := "✗ reject"
	if v.Approves() {
		s = "✓ approve"
	}
	if v.Severity != "" {
		s += " (" + v.Severity + ")"
	}
	return s
}

// judge reads a review with the memory its author left, as the review
// policy does.
func judge(a *blackboard.Artefact) reviewpolicy.Verdict {
	var m *memory.AgentMemory
	if a.Memory != "" {
		var doc memory.AgentMemory
		if json.Unmarshal([]byte(a.Memory), &doc) == nil {
			m = &doc
		}
	}
	return reviewpolicy.Judge(a.Payload, m)
}

// claimNode describes a claim with its status and outcome.
func claimNode(c *blackboard.Claim) *treeNode {
	label := "claim " + blackboard.ShortID(c.ID)
	if c.IsFeedback() {
		label = fmt.Sprintf("feedback claim %s (iteration %d)", blackboard.ShortID(c.ID), c.Iteration)
	}
	text := label + " " + string(c.Status)
	switch {
	case c.TerminationReason != "":
		text += ": " + oneLine(c.TerminationReason)
	case c.CompletionReason != "":
		text += ": " + oneLine(c.CompletionReason)
	case !c.Status.Final():
		if g := grantsText(c); g != "" {
			text += " · granted " + g
		}
	}
	return &treeNode{text: text, colour: claimColour(c.Status)}
}

// artefactColour highlights failures in red and reviews by verdict.
func artefactColour(a *blackboard.Artefact) colour {
	switch a.StructuralType {
	case blackboard.StructuralFailure:
		return colourRed
	case blackboard.StructuralReview:
		if judge(a).Approves() {
			return colourGreen
		}
		return colourYellow
	}
	if a.IsGoal() {
		return colourBold
	}
	return colourNone
}

// workflowColour colours a workflow status.
func workflowColour(s blackboard.WorkflowStatus) colour {
	switch s {
	case blackboard.WorkflowCompleted:
		return colourGreen
	case blackboard.WorkflowFailed, blackboard.WorkflowRejected:
		return colourRed
	case blackboard.WorkflowCancelled:
		return colourYellow
	}
	return colourCyan
}

// showTree prints a workflow's provenance tree, pointing out mark.
func showTree(ctx context.Context, w io.Writer, style outputStyle, bb *blackboard.Client, workflowID, mark string) error {
	p, err := loadProvenance(ctx, bb, workflowID)
	if err != nil {
		return err
	}
	p.mark = mark
	fmt.Fprintln(w, p.header(style))
	for _, n := range p.nodes() {
		renderTree(w, style, n)
	}
	return nil
}
