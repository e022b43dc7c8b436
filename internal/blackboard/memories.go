package blackboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Agent memories and the shared memory. The cub stores an
// agent's memory with the result that carries it (the artefact's memory
// field, and the workflow's latest memory per agent); the orchestrator
// alone writes the shared memory, in the transition that ends a phase.
// This package stores the documents; internal/memory gives them meaning.

// StoredMemory is one agent's latest memory in a workflow.
type StoredMemory struct {
	Agent      string
	ArtefactID string `json:"artefact_id"`
	ClaimID    string `json:"claim_id"`
	AtMs       int64  `json:"at_ms"`
	// Memory is the memory document (JSON).
	Memory string
}

// GetSharedMemory reads a workflow's shared memory and its revision; a
// workflow without one gives "" and 0.
func (c *Client) GetSharedMemory(ctx context.Context, workflowID string) (string, int64, error) {
	if err := ValidateID(workflowID); err != nil {
		return "", 0, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	v, err := c.rdb.HMGet(ctx, c.keys.SharedMemory(workflowID), "json", "rev").Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", 0, fmt.Errorf("blackboard: read shared memory of %s: %w", workflowID, err)
	}
	doc, _ := v[0].(string)
	var rev int64
	if s, ok := v[1].(string); ok {
		rev, _ = strconv.ParseInt(s, 10, 64)
	}
	return doc, rev, nil
}

// WriteSharedMemoryParams is one write of a workflow's shared memory.
type WriteSharedMemoryParams struct {
	WorkflowID string
	// ClaimID is the claim whose phase the write merges.
	ClaimID string
	// Doc is the whole new document.
	Doc string
	// ExpectRev is the revision GetSharedMemory returned.
	ExpectRev int64
	// Epoch is the leader's.
	Epoch int64
}

// WriteSharedMemory replaces a workflow's shared memory with p.Doc if its
// revision is still p.ExpectRev, under the leader's epoch. Errors:
// ErrStaleMemory (another merge came first: read again), ErrFenced,
// ErrInvalid.
func (c *Client) WriteSharedMemory(ctx context.Context, p WriteSharedMemoryParams) error {
	if err := validateIDs(p.WorkflowID, p.ClaimID); err != nil {
		return err
	}
	if len(p.Doc) > MaxPayloadBytes {
		return fmt.Errorf("%w: shared memory of workflow %s is %d bytes, over %d", ErrInvalid, p.WorkflowID, len(p.Doc), MaxPayloadBytes)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.writeShared, []string{c.keys.SharedMemory(p.WorkflowID), c.keys.Events(), c.keys.Epoch()},
		p.Doc, strconv.FormatInt(p.ExpectRev, 10), epochArg(p.Epoch), p.WorkflowID, p.ClaimID, c.keys.WorkflowEvents())
	if err != nil {
		return err
	}
	if err := scriptError("write_shared_memory", res); err != nil {
		return fmt.Errorf("workflow %s: %w", p.WorkflowID, err)
	}
	return nil
}

// ReadPhase reads the given artefacts and the workflow's shared memory in
// one pipelined round trip: what the orchestrator needs at a phase
// boundary (the results and their memories, and what they merge into).
func (c *Client) ReadPhase(ctx context.Context, workflowID string, ids []string) ([]*Artefact, string, int64, error) {
	if err := ValidateID(workflowID); err != nil {
		return nil, "", 0, err
	}
	if err := validateIDs(ids...); err != nil {
		return nil, "", 0, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, c.keys.Artefact(id))
	}
	sm := pipe.HMGet(ctx, c.keys.SharedMemory(workflowID), "json", "rev")
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, "", 0, fmt.Errorf("blackboard: read phase of %s: %w", workflowID, err)
	}
	arts, err := decodeArtefactCmds(ids, cmds)
	if err != nil {
		return nil, "", 0, err
	}
	v := sm.Val()
	doc, _ := v[0].(string)
	var rev int64
	if s, ok := v[1].(string); ok {
		rev, _ = strconv.ParseInt(s, 10, 64)
	}
	return arts, doc, rev, nil
}

// AgentMemories reads the latest memory of every agent of a workflow.
func (c *Client) AgentMemories(ctx context.Context, workflowID string) (map[string]StoredMemory, error) {
	if err := ValidateID(workflowID); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	m, err := c.rdb.HGetAll(ctx, c.keys.WorkflowMemories(workflowID)).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read memories of %s: %w", workflowID, err)
	}
	out := make(map[string]StoredMemory, len(m))
	for agent, raw := range m {
		sm, err := decodeStoredMemory(agent, raw)
		if err != nil {
			return nil, fmt.Errorf("workflow %s: %w", workflowID, err)
		}
		out[agent] = sm
	}
	return out, nil
}

func decodeStoredMemory(agent, raw string) (StoredMemory, error) {
	var doc struct {
		ArtefactID string          `json:"artefact_id"`
		ClaimID    string          `json:"claim_id"`
		AtMs       int64           `json:"at_ms"`
		Memory     json.RawMessage `json:"memory"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return StoredMemory{}, fmt.Errorf("%w: memory of agent %s: %v", ErrCorrupt, agent, err)
	}
	return StoredMemory{Agent: agent, ArtefactID: doc.ArtefactID, ClaimID: doc.ClaimID, AtMs: doc.AtMs, Memory: string(doc.Memory)}, nil
}
