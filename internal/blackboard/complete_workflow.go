package blackboard

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// CompleteWorkflowIfDone completes a running workflow whose open items are
// all closed, with the outcome close_item writes ("all work complete",
// and the chain ends by configuration). A result whose script closed the
// last open item leaves this to the orchestrator when its caller's Redis
// user may not end workflows (a cub's): its claim_completed_by_result
// entry says ended "due". It returns false (and no error) when the
// workflow had already ended or has open items again. Errors: ErrFenced,
// ErrInvalid, and NOPERM without the end_workflow privilege.
func (c *Client) CompleteWorkflowIfDone(ctx context.Context, workflowID string, epoch int64) (bool, error) {
	if err := ValidateID(workflowID); err != nil {
		return false, err
	}
	body, _ := json.Marshal(map[string]string{ // plain strings always marshal
		"workflow_id": workflowID, "epoch": strconv.FormatInt(epoch, 10), "workflow_channel": c.keys.WorkflowEvents(),
	})
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.completeWorkflow,
		[]string{c.keys.Workflow(workflowID), c.keys.Events(), c.keys.Epoch()}, string(body))
	if err != nil {
		return false, err
	}
	if res[0] == "OK" {
		return len(res) > 1 && res[1] == "1", nil
	}
	if err := scriptError("complete_workflow", res); err != nil {
		return false, fmt.Errorf("workflow %s: %w", workflowID, err)
	}
	return false, nil
}
