package blackboard

import (
	"context"
	"fmt"
	"strconv"
)

// UsageTokens returns the model tokens an artefact's metadata reports
// (input_tokens plus output_tokens, as the cub stores a tool's usage), 0
// when it reports none or garbage.
func UsageTokens(meta map[string]string) int64 {
	var n int64
	for _, k := range []string{"input_tokens", "output_tokens"} {
		if v, err := strconv.ParseInt(meta[k], 10, 64); err == nil && v > 0 {
			n += v
		}
	}
	return n
}

// AgentTokens reads the model tokens each agent has spent across the
// instance (counted when its results are written).
func (c *Client) AgentTokens(ctx context.Context) (map[string]int64, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	m, err := c.rdb.HGetAll(ctx, c.keys.AgentTokens()).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read agent tokens: %w", err)
	}
	out := make(map[string]int64, len(m))
	for agent, v := range m {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: agent tokens of %q: %q is not a number", ErrCorrupt, agent, v)
		}
		out[agent] = n
	}
	return out, nil
}
