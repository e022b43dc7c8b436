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
	raw, err := c.hgetAllEach(ctx, claimIDs, c.keys.Bids, "bids")
	if err != nil {
		return nil, err
	}
	out := make([]map[string]Bid, len(raw))
	for i, m := range raw {
		out[i] = decodeBids(m)
	}
	return out, nil
}

// hgetAllEach reads the hash key(id) of every id in one pipelined round
// trip, aligned with ids (empty for a missing hash); what names them in
// an error.
func (c *Client) hgetAllEach(ctx context.Context, ids []string, key func(string) string, what string) ([]map[string]string, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, key(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("blackboard: read %s: %w", what, err)
	}
	out := make([]map[string]string, len(ids))
	for i, cmd := range cmds {
		out[i] = cmd.Val()
	}
	return out, nil
}
