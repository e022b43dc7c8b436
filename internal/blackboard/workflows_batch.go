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
	return getMany(ctx, c, ids, "workflow", c.keys.Workflow, DecodeWorkflow)
}

// getMany reads the hashes of many records of one kind in one pipelined
// round trip and decodes them; a missing record is nil in the aligned
// result.
func getMany[T any](ctx context.Context, c *Client, ids []string, kind string, key func(string) string,
	decode func(map[string]string) (*T, error)) ([]*T, error) {
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
		cmds[i] = pipe.HGetAll(ctx, key(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("blackboard: read %ss: %w", kind, err)
	}
	out := make([]*T, len(ids))
	for i, cmd := range cmds {
		if len(cmd.Val()) == 0 {
			continue
		}
		v, err := decode(cmd.Val())
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, ids[i], err)
		}
		out[i] = v
	}
	return out, nil
}
