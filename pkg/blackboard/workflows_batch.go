package blackboard

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// GetWorkflows reads many workflows in one pipelined round trip; missing
// workflows are nil in the aligned result. Errors: ErrInvalid (a bad id),
// ErrCorrupt.
func (c *Client) GetWorkflows(ctx context.Context, ids []string) ([]*Workflow, error) {
	if err := validateIDs(ids...); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, c.keys.Workflow(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("blackboard: read workflows: %w", err)
	}
	out := make([]*Workflow, len(ids))
	for i, cmd := range cmds {
		if len(cmd.Val()) == 0 {
			continue
		}
		w, err := DecodeWorkflow(cmd.Val())
		if err != nil {
			return nil, fmt.Errorf("workflow %s: %w", ids[i], err)
		}
		out[i] = w
	}
	return out, nil
}
