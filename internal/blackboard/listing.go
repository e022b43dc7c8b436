package blackboard

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/textcut"
)

func zMember(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

// Page is one page of artefact ids from a time index, newest first.
type Page struct {
	IDs []string
	// Scores are the created_at_ms of each id.
	Scores []int64
	// Next is the cursor for the following (older) page; empty at the end.
	Next string
}

// PageQuery selects a page of a time index.
type PageQuery struct {
	// WorkflowID limits the page to one workflow's artefacts.
	WorkflowID string
	// SinceMs and UntilMs bound created_at_ms (inclusive); zero = open.
	SinceMs, UntilMs int64
	// Limit is the page size; zero means 50.
	Limit int64
	// Cursor continues from a previous Page.Next.
	Cursor string
}

// ListArtefacts returns a page of artefact ids, newest first, from the
// time index (never KEYS or SCAN): O(log N + page) whatever the total.
// The cursor is "<score>:<offset>" so that artefacts created in the same
// millisecond page correctly.
func (c *Client) ListArtefacts(ctx context.Context, q PageQuery) (Page, error) {
	key := c.keys.ArtefactIndex()
	if q.WorkflowID != "" {
		if err := ValidateID(q.WorkflowID); err != nil {
			return Page{}, err
		}
		key = c.keys.WorkflowArtefactIndex(q.WorkflowID)
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	max, offset := "+inf", int64(0)
	if q.UntilMs > 0 {
		max = strconv.FormatInt(q.UntilMs, 10)
	}
	if q.Cursor != "" {
		var score int64
		if _, err := fmt.Sscanf(q.Cursor, "%d:%d", &score, &offset); err != nil || offset < 0 {
			return Page{}, fmt.Errorf("%w: page cursor %q", ErrInvalid, q.Cursor)
		}
		max = strconv.FormatInt(score, 10)
	}
	min := "-inf"
	if q.SinceMs > 0 {
		min = strconv.FormatInt(q.SinceMs, 10)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	zs, err := c.rdb.ZRevRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{
		Max: max, Min: min, Offset: offset, Count: q.Limit + 1,
	}).Result()
	if err != nil {
		return Page{}, fmt.Errorf("blackboard: list artefacts: %w", err)
	}
	var p Page
	for i, z := range zs {
		if int64(i) == q.Limit {
			// There is more: the cursor resumes at the last returned
			// score, skipping the ones with that score already shown.
			last := p.Scores[len(p.Scores)-1]
			skip := int64(0)
			for j := len(p.Scores) - 1; j >= 0 && p.Scores[j] == last; j-- {
				skip++
			}
			if q.Cursor != "" && strconv.FormatInt(last, 10) == max {
				skip += offset
			}
			p.Next = fmt.Sprintf("%d:%d", last, skip)
			break
		}
		p.IDs = append(p.IDs, z.Member.(string))
		p.Scores = append(p.Scores, int64(z.Score))
	}
	return p, nil
}

// ResolvePrefix is the kind of record a short id refers to.
type ResolvePrefix string

// Kinds of records with short-id lookups.
const (
	PrefixArtefact ResolvePrefix = "artefact"
	PrefixClaim    ResolvePrefix = "claim"
)

// AmbiguousError lists the candidates of an ambiguous prefix; it wraps
// ErrAmbiguous.
type AmbiguousError struct {
	Prefix     string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("blackboard: id prefix %q matches %d or more records", e.Prefix, len(e.Candidates))
}

// Unwrap lets errors.Is match ErrAmbiguous.
func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }

// ResolveID expands a unique id prefix (at least 4 characters) to a full id
// with one ZRANGEBYLEX on the id index. Errors: ErrNotFound,
// *AmbiguousError (up to 10 candidates), ErrInvalid.
func (c *Client) ResolveID(ctx context.Context, kind ResolvePrefix, prefix string) (string, error) {
	if len(prefix) < 4 || len(prefix) > 36 {
		return "", fmt.Errorf("%w: id prefix %q must be 4 to 36 characters", ErrInvalid, textcut.Bytes(prefix, 40))
	}
	for _, r := range prefix {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r == '-') {
			return "", fmt.Errorf("%w: id prefix %q may only hold 0-9, a-f and '-'", ErrInvalid, prefix)
		}
	}
	key := c.keys.ArtefactIDIndex()
	if kind == PrefixClaim {
		key = c.keys.ClaimIDIndex()
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	ids, err := c.rdb.ZRangeByLex(ctx, key, &redis.ZRangeBy{
		Min: "[" + prefix, Max: "[" + prefix + "\xff", Count: 10,
	}).Result()
	if err != nil {
		return "", fmt.Errorf("blackboard: resolve %s prefix %s: %w", kind, prefix, err)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("%w: no %s id starts with %q", ErrNotFound, kind, prefix)
	case 1:
		return ids[0], nil
	}
	return "", &AmbiguousError{Prefix: prefix, Candidates: ids}
}

// CountArtefacts returns the number of artefacts in the instance.
func (c *Client) CountArtefacts(ctx context.Context) (int64, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	n, err := c.rdb.ZCard(ctx, c.keys.ArtefactIndex()).Result()
	if err != nil {
		return 0, fmt.Errorf("blackboard: count artefacts: %w", err)
	}
	return n, nil
}

// ListWorkflows returns up to limit workflow ids, newest first.
func (c *Client) ListWorkflows(ctx context.Context, limit int64) ([]string, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	ids, err := c.rdb.ZRevRange(ctx, c.keys.WorkflowIndex(), 0, limit-1).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: list workflows: %w", err)
	}
	return ids, nil
}
