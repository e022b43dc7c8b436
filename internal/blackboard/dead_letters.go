package blackboard

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// DeadLetter is an orchestrator queue entry set aside after its handling
// failed Attempts times in a row, with the last error.
type DeadLetter struct {
	// ID is the dead-letter stream id; its time part is when it was set aside.
	ID       string `json:"id"`
	Event    Event  `json:"event"`
	Error    string `json:"error"`
	Attempts int    `json:"attempts"`
	AtMs     int64  `json:"at_ms"`
}

// DeadLetter moves a queue entry that keeps failing to the dead-letter
// stream: in one MULTI it appends the event, the error and the attempts
// there and acknowledges (and deletes) the entry, so it is neither lost
// nor retried forever.
func (ec *EventConsumer) DeadLetter(ctx context.Context, ev Event, cause error, attempts int) error {
	doc, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("blackboard: encode dead letter %s: %w", ev.StreamID, err)
	}
	msg := ""
	if cause != nil {
		msg = cause.Error()
	}
	ctx, cancel := ec.c.op(ctx)
	defer cancel()
	_, err = ec.c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: ec.c.keys.DeadLetters(), Values: []any{
			"stream_id", ev.StreamID, "event", string(doc), "error", msg, "attempts", strconv.Itoa(attempts)}})
		p.XAck(ctx, ec.stream, ec.group, ev.StreamID)
		if ec.trim {
			p.XDel(ctx, ec.stream, ev.StreamID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("blackboard: dead-letter event %s: %w", ev.StreamID, err)
	}
	return nil
}

// DeadLetters returns up to limit dead letters, newest first (limit <= 0:
// 100).
func (c *Client) DeadLetters(ctx context.Context, limit int64) ([]DeadLetter, error) {
	if limit <= 0 {
		limit = 100
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	msgs, err := c.rdb.XRevRangeN(ctx, c.keys.DeadLetters(), "+", "-", limit).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read dead letters: %w", err)
	}
	out := make([]DeadLetter, 0, len(msgs))
	for _, m := range msgs {
		get := func(k string) string { s, _ := m.Values[k].(string); return s }
		d := DeadLetter{ID: m.ID, Error: get("error"), Attempts: atoi(get("attempts"))}
		if t, ok := StreamIDTime(m.ID); ok {
			d.AtMs = t.UnixMilli()
		}
		if err := json.Unmarshal([]byte(get("event")), &d.Event); err != nil {
			return nil, fmt.Errorf("%w: dead letter %s: %v", ErrCorrupt, m.ID, err)
		}
		out = append(out, d)
	}
	return out, nil
}
