package blackboard

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Learning sources.
const (
	// LearningFromLearner: the learner agent wrote the learning.
	LearningFromLearner = "learner"
	// LearningFromReason: the human's reason is the learning (no learner
	// is configured, or it failed).
	LearningFromReason = "reason"
)

// MaxLearningBytes bounds one learning's text.
const MaxLearningBytes = 2048

// Learning is one lesson drawn from a human rejection.
type Learning struct {
	// ID is one per rejection (derived from the rejected claim), which
	// makes recording idempotent.
	ID   string `json:"id"`
	AtMs int64  `json:"at_ms"`
	// ArtefactType is the type of the rejected artefact; Title names the
	// task it belonged to (the goal's subject or first line).
	ArtefactType string `json:"artefact_type"`
	Title        string `json:"title"`
	// Text is the learning, one line.
	Text string `json:"text"`
	// Source is LearningFromLearner or LearningFromReason.
	Source     string `json:"source"`
	ArtefactID string `json:"artefact_id,omitempty"`
	WorkflowID string `json:"workflow_id,omitempty"`
	DecidedBy  string `json:"decided_by,omitempty"`
}

// RecordLearning stores l once (a repeat with the same ID changes nothing
// and reports recorded=false) and appends learning_recorded to the event
// stream in the same step. AtMs is set from the Redis clock. epoch fences
// the write. Errors: ErrInvalid, ErrFenced.
func (c *Client) RecordLearning(ctx context.Context, l *Learning, epoch int64) (recorded bool, err error) {
	if err := ValidateID(l.ID); err != nil {
		return false, err
	}
	l.Text = oneLineText(l.Text)
	l.Title = oneLineText(l.Title)
	switch {
	case l.Text == "":
		return false, fmt.Errorf("%w: learning %s has no text", ErrInvalid, l.ID)
	case len(l.Text) > MaxLearningBytes:
		l.Text = cutUTF8(l.Text, MaxLearningBytes-len("…")) + "…"
	}
	if len(l.Title) > 200 {
		l.Title = cutUTF8(l.Title, 200-len("…")) + "…"
	}
	if l.Source != LearningFromLearner && l.Source != LearningFromReason {
		return false, fmt.Errorf("%w: learning source %q is not %q or %q", ErrInvalid, l.Source, LearningFromLearner, LearningFromReason)
	}
	body, err := json.Marshal(l)
	if err != nil {
		return false, fmt.Errorf("blackboard: encode learning: %w", err)
	}
	octx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(octx, c.scripts.recordLearning,
		[]string{c.keys.Learnings(), c.keys.LearningIndex(), c.keys.Events(), c.keys.Epoch()},
		string(body), epochArg(epoch), c.keys.ClaimEvents())
	if err != nil {
		return false, err
	}
	switch res[0] {
	case "OK", "EXISTS":
		l.AtMs, _ = strconv.ParseInt(res[1], 10, 64)
		return res[0] == "OK", nil
	}
	return false, fmt.Errorf("learning %s: %w", l.ID, scriptError("record_learning", res))
}

// Learnings returns every recorded learning, oldest first.
func (c *Client) Learnings(ctx context.Context) ([]Learning, error) {
	octx, cancel := c.op(ctx)
	defer cancel()
	ids, err := c.rdb.ZRange(octx, c.keys.LearningIndex(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read learnings index: %w", err)
	}
	return c.readLearnings(octx, ids)
}

// ToolMemory is what every tool receives besides its claim: the learnings
// text and the handbook, with a revision that moves whenever either
// changes.
type ToolMemory struct {
	Learnings string
	Handbook  string
	Rev       int64
}

// PublishToolMemory replaces the texts tools receive as memory.learnings
// and memory.handbook; an unchanged publish changes nothing (no new rev),
// so cubs keep their cached copy. Errors: ErrInvalid for oversized text.
func (c *Client) PublishToolMemory(ctx context.Context, learnings, handbook string) error {
	if len(learnings) > MaxPayloadBytes || len(handbook) > MaxPayloadBytes {
		return fmt.Errorf("%w: learnings (%d bytes) and handbook (%d bytes) must each stay under %d bytes",
			ErrInvalid, len(learnings), len(handbook), MaxPayloadBytes)
	}
	octx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(octx, c.scripts.publishMemory, []string{c.keys.ToolMemory()}, learnings, handbook)
	if err != nil {
		return err
	}
	return scriptError("publish_tool_memory", res)
}

// GetToolMemory reads the published tool memory (zero when none was
// published).
func (c *Client) GetToolMemory(ctx context.Context) (ToolMemory, error) {
	octx, cancel := c.op(ctx)
	defer cancel()
	v, err := c.rdb.HMGet(octx, c.keys.ToolMemory(), "learnings", "handbook", "rev").Result()
	if err != nil {
		return ToolMemory{}, fmt.Errorf("blackboard: read tool memory: %w", err)
	}
	var m ToolMemory
	m.Learnings, _ = v[0].(string)
	m.Handbook, _ = v[1].(string)
	if s, ok := v[2].(string); ok {
		m.Rev, _ = strconv.ParseInt(s, 10, 64)
	}
	return m, nil
}

// oneLineText joins the lines of s with single spaces.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cutUTF8 cuts s to at most n bytes at a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// epochArg renders a leader epoch for a script; zero (none) is sent as
// such, and refused there.
func epochArg(epoch int64) string {
	return strconv.FormatInt(epoch, 10)
}
