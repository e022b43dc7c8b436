package blackboard

import (
	"context"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/provenance"
)

// GetArtefact reads one artefact version. Errors: ErrNotFound.
func (c *Client) GetArtefact(ctx context.Context, id string) (*Artefact, error) {
	return c.bb.GetArtefact(ctx, id)
}

// GetArtefacts reads several artefacts in one round trip; the result
// has one entry per id, nil for an id that does not exist.
func (c *Client) GetArtefacts(ctx context.Context, ids []string) ([]*Artefact, error) {
	return c.bb.GetArtefacts(ctx, ids)
}

// Thread returns every version of the artefact logicalID, oldest first.
// Errors: ErrNotFound.
func (c *Client) Thread(ctx context.Context, logicalID string) ([]*Artefact, error) {
	return c.bb.Thread(ctx, logicalID)
}

// ListArtefacts returns a page of artefact ids, newest first (of one
// workflow when q.WorkflowID is set); read them with GetArtefacts.
func (c *Client) ListArtefacts(ctx context.Context, q PageQuery) (Page, error) {
	return c.bb.ListArtefacts(ctx, q)
}

// GetWorkflow reads a workflow; its id is its goal's. Errors:
// ErrNotFound.
func (c *Client) GetWorkflow(ctx context.Context, id string) (*Workflow, error) {
	return c.bb.GetWorkflow(ctx, id)
}

// ListWorkflows returns a page of workflows, newest first, filtered by q.
func (c *Client) ListWorkflows(ctx context.Context, q WorkflowQuery) (WorkflowPage, error) {
	return c.bb.ListWorkflowPage(ctx, q)
}

// GetClaim reads a claim. Errors: ErrNotFound.
func (c *Client) GetClaim(ctx context.Context, id string) (*Claim, error) {
	return c.bb.GetClaim(ctx, id)
}

// WorkflowClaims returns the ids of a workflow's claims.
func (c *Client) WorkflowClaims(ctx context.Context, workflowID string) ([]string, error) {
	return c.bb.WorkflowClaims(ctx, workflowID)
}

// WorkflowArtefacts returns every artefact of a workflow (all versions,
// the goal included), oldest first: by CreatedAtMs, those of one
// millisecond by id. It reads as `sett hoard` and the console do
// (internal/provenance).
func (c *Client) WorkflowArtefacts(ctx context.Context, workflowID string) ([]*Artefact, error) {
	arts, _, err := provenance.LoadArtefacts(ctx, c.bb, workflowID, 0)
	return arts, err
}

// FinalArtefacts returns a workflow's results: its artefacts that no
// other artefact builds on, reviews aside, oldest first — what
// `sett forage --wait` prints when the workflow ends. The goal is among
// them only when nothing was built on it.
func (c *Client) FinalArtefacts(ctx context.Context, workflowID string) ([]*Artefact, error) {
	arts, err := c.WorkflowArtefacts(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	return blackboard.FinalArtefacts(arts), nil
}
