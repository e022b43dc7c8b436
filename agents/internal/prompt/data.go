package prompt

import (
	"strings"

	"github.com/settdev/sett/internal/tool"
)

// Data is what a template sees: the whole tool input, plus shortcuts.
//
// The embedded tool.Input gives .ClaimType, .TargetArtefact,
// .ContextChain (as the cub built it), .Feedback, .Workflow, .Memory
// (.Memory.Learnings, .Memory.Handbook, .Memory.Shared,
// .Memory.Upstream), .Instance and .Agent.
type Data struct {
	tool.Input
	// Goal is the workflow's goal text.
	Goal string
	// Target is the target artefact (= .TargetArtefact).
	Target tool.Artefact
	// Context is the context chain without the target, without the
	// reviews of .Feedback (a feedback claim's chain holds them too) and
	// without the goal artefact when its text is .Goal, so that a
	// template shows each text once.
	Context []tool.Artefact
	// Iteration is the workflow's iteration (= .Workflow.Iteration).
	Iteration int
	// IsFeedback is set on feedback claims: .Feedback holds the reviews
	// to address and .Target the version they rejected.
	IsFeedback bool
	// IsLearn is set on learn claims.
	IsLearn bool
	// Reason is, on a learn claim, the human's reason for the rejection
	// (the text of .Feedback[0]); "" otherwise.
	Reason string
	// Commit describes the target when it is a CodeCommit, nil otherwise.
	Commit *Commit
}

// Commit is what a template knows of a CodeCommit target.
type Commit struct {
	// Hash is the commit hash (the artefact's payload, trimmed).
	Hash string
	// Available says whether Show holds the commit.
	Available bool
	// Show is `git show --stat --patch` of the commit.
	Show string
	// Why says why the commit could not be shown, when !Available.
	Why string
}

// NewData builds the view of in that templates see. commit is the
// CodeCommit view of the target, or nil.
func NewData(in tool.Input, commit *Commit) Data {
	d := Data{
		Input:      in,
		Goal:       in.Workflow.Goal,
		Target:     in.TargetArtefact,
		Iteration:  in.Workflow.Iteration,
		IsFeedback: in.ClaimType == tool.ClaimTypeFeedback,
		IsLearn:    in.ClaimType == tool.ClaimTypeLearn,
		Commit:     commit,
	}
	skip := map[string]bool{in.TargetArtefact.ID: true}
	for _, f := range in.Feedback {
		skip[f.ID] = true
	}
	for _, a := range in.ContextChain {
		if !skip[a.ID] && !(a.Type == "GoalDefined" && strings.TrimSpace(a.Payload) == strings.TrimSpace(d.Goal)) {
			d.Context = append(d.Context, a)
		}
	}
	if d.IsLearn && len(in.Feedback) > 0 {
		d.Reason = reviewText(in.Feedback[0].Payload)
	}
	return d
}
