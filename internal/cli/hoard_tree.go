package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/provenance"
	"github.com/settdev/sett/internal/textcut"
)

// loadWorkflowArtefacts reads every artefact of a workflow, oldest first.
// Workflows are bounded by max_workflow_artefacts, so this stays small.
func loadWorkflowArtefacts(ctx context.Context, bb *blackboard.Client, workflowID string) ([]*blackboard.Artefact, error) {
	arts, _, err := provenance.LoadArtefacts(ctx, bb, workflowID, 0)
	return arts, err
}

// tree draws a workflow's provenance (internal/provenance, which the web
// console draws as a graph) as a text tree: every thread hangs under the
// artefact its first version was derived from.
type tree struct {
	*provenance.Workflow
	// mark is an artefact to point out ("◀"), or "".
	mark string
}

// loadProvenance reads a workflow with its artefacts, claims and bids.
func loadProvenance(ctx context.Context, bb *blackboard.Client, workflowID string) (*tree, error) {
	p, err := provenance.Load(ctx, bb, workflowID, provenance.Options{Bids: true})
	if err != nil {
		return nil, err
	}
	return &tree{Workflow: p}, nil
}

// header describes the workflow in one line.
func (p *tree) header(style outputStyle) string {
	status := style.paint(workflowColour(p.WF.Status), string(p.WF.Status))
	s := fmt.Sprintf("Workflow %s  %s", p.WF.ID, status)
	if p.WF.Outcome != "" {
		s += ": " + oneLine(p.WF.Outcome)
	}
	s += fmt.Sprintf("  · started %s · %d artefact(s) · score %d", stamp(style.Now(), msTime(p.WF.StartedAtMs)), len(p.Arts), p.WF.Priority)
	if p.WF.Tokens > 0 {
		s += fmt.Sprintf(" · tokens %d (%s)", p.WF.Tokens, agentTokensText(p.WF.AgentTokens))
	}
	return s
}

// nodes builds the tree: one node per root thread.
func (p *tree) nodes() []*treeNode {
	var out []*treeNode
	for _, logical := range p.Roots {
		out = append(out, p.threadNode(logical))
	}
	return out
}

// threadNode is one thread: the artefact itself when it has one version,
// else a "Type v1 → v2" node with one child per version.
func (p *tree) threadNode(logical string) *treeNode {
	vs := p.Threads[logical]
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
func (p *tree) artefactNode(a *blackboard.Artefact, withType bool) *treeNode {
	n := &treeNode{text: artefactLine(a, withType), colour: artefactColour(a)}
	if a.ID == p.mark {
		n.text += "  ◀"
	}
	for _, c := range p.Claims[a.ID] {
		cn := claimNode(c)
		if b := p.BidText(c.ID); b != "" {
			cn.text += " · " + b
		}
		if c.Approval.Decision != "" {
			cn.text += " · " + string(c.Approval.Decision) + " by " + c.Approval.By
			if c.Approval.Reason != "" {
				cn.text += ": " + oneLine(c.Approval.Reason)
			}
		}
		n.children = append(n.children, cn)
	}
	for _, logical := range p.Children[a.ID] {
		n.children = append(n.children, p.threadNode(logical))
	}
	// The review policy's decision reads after the reviews it weighed.
	for _, c := range p.Claims[a.ID] {
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
func verdictText(a *blackboard.Artefact) string { return provenance.VerdictText(a) }

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
		if provenance.Judge(a).Approves() {
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
