package blackboard

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// GetBidsOf reads the bids of many claims in one pipelined round trip,
// aligned with claimIDs (agent → bid; empty for a claim without bids).
// Errors: ErrInvalid (a bad id).
func (c *Client) GetBidsOf(ctx context.Context, claimIDs []string) ([]map[string]Bid, error) {
	if err := validateIDs(claimIDs...); err != nil {
		return nil, err
	}
	if len(claimIDs) == 0 {
		return nil, nil
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(claimIDs))
	for i, id := range claimIDs {
		cmds[i] = pipe.HGetAll(ctx, c.keys.Bids(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("blackboard: read bids: %w", err)
	}
	out := make([]map[string]Bid, len(claimIDs))
	for i, cmd := range cmds {
		out[i] = decodeBids(cmd.Val())
	}
	return out, nil
}
