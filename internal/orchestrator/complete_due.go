package orchestrator

import (
	"context"

	"github.com/settdev/sett/internal/blackboard"
)

// CompleteDue completes a workflow whose last open item a claim's result
// closed in its own script, when that script could not end the workflow
// itself: the cub's Redis user holds no end_workflow privilege (see
// internal/acl), so its claim_completed_by_result entry says ended "due".
func (a *ClaimAdvancer) CompleteDue(ctx context.Context, workflowID string) error {
	ended, err := a.bb.CompleteWorkflowIfDone(ctx, workflowID, a.epoch())
	if err != nil {
		return err
	}
	if ended {
		a.m.WorkflowsEnded.WithLabelValues(string(blackboard.WorkflowCompleted)).Inc()
		a.log.Info().Str("workflow_id", workflowID).Str("status", string(blackboard.WorkflowCompleted)).
			Msg("workflow completed (its last result closed it)")
	}
	return nil
}
