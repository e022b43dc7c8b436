package blackboard

import (
	"context"

	"github.com/settdev/sett/internal/blackboard"
)

// Goal is what a person asks of the instance.
type Goal struct {
	// Text is the goal itself; its first line becomes the summary.
	Text string
	// Priority orders waiting work: a higher priority goes first.
	Priority int
	// By names who posts it; "" means "user", as `sett forage` records.
	By string
	// Metadata is kept with the goal (a tool sees it in its input).
	Metadata map[string]string
}

// PostGoal writes the goal, which starts a workflow of the same id: the
// orchestrator then asks the agents, grants the work and drives the
// reviews. It returns the goal artefact as stored; watch its workflow
// with WatchWorkflow. Errors: ErrInvalid (empty or oversized text, bad
// metadata).
func (c *Client) PostGoal(ctx context.Context, g Goal) (*Artefact, error) {
	by := g.By
	if by == "" {
		by = "user"
	}
	a := blackboard.NewGoal(g.Text, g.Priority, by, g.Metadata)
	if err := c.bb.CreateArtefact(ctx, a, blackboard.WriteAuth{}); err != nil {
		return nil, err
	}
	return a, nil
}
