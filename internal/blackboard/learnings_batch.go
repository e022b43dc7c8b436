package blackboard

import (
	"context"
	"encoding/json"
	"fmt"
)

// GetLearnings reads the learnings with the given ids (one HMGET); ids
// with no learning are skipped. A rejected claim's learning has the id
// DeriveID("learning", claimID), so a workflow's learnings are read from
// its claims without reading every learning. Errors: ErrInvalid (a bad
// id), ErrCorrupt.
func (c *Client) GetLearnings(ctx context.Context, ids []string) ([]Learning, error) {
	if err := validateIDs(ids...); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	octx, cancel := c.op(ctx)
	defer cancel()
	return c.readLearnings(octx, ids)
}

// readLearnings reads the learnings with the given ids in one HMGET,
// skipping ids with none, in the order of ids.
func (c *Client) readLearnings(ctx context.Context, ids []string) ([]Learning, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	vals, err := c.rdb.HMGet(ctx, c.keys.Learnings(), ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read learnings: %w", err)
	}
	var out []Learning
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue
		}
		var l Learning
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			return nil, fmt.Errorf("%w: learning %s: %v", ErrCorrupt, ids[i], err)
		}
		out = append(out, l)
	}
	return out, nil
}
