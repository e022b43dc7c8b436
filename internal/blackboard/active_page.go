package blackboard

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// ActivePage is one page of the active-claims index, oldest first, for a
// sweep that walks it incrementally: the last score is the cursor of the
// next page (which starts at that score again, so skip the ids seen).
type ActivePage struct {
	IDs    []string
	Scores []float64
}

// ActiveClaimsFrom returns up to limit active claim ids whose index score
// (creation time) is at least from, oldest first. A sweep keeps the last
// score as its cursor, so a pass costs limit entries per call however
// many claims are active.
func (c *Client) ActiveClaimsFrom(ctx context.Context, from float64, limit int64) (ActivePage, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	zs, err := c.rdb.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: c.keys.ActiveClaims(), ByScore: true,
		Start: strconv.FormatFloat(from, 'f', -1, 64), Stop: "+inf", Count: limit}).Result()
	if err != nil {
		return ActivePage{}, fmt.Errorf("blackboard: read active claims: %w", err)
	}
	p := ActivePage{IDs: make([]string, 0, len(zs)), Scores: make([]float64, 0, len(zs))}
	for _, z := range zs {
		id, _ := z.Member.(string)
		p.IDs, p.Scores = append(p.IDs, id), append(p.Scores, z.Score)
	}
	return p, nil
}
