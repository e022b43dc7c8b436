package blackboard

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/textcut"
)

// WriteAuth says on whose authority an artefact is written.
type WriteAuth struct {
	// Epoch is the orchestrator's leader epoch; writes from a stale leader
	// are refused with ErrFenced. Zero for writes that are not the
	// orchestrator's.
	Epoch int64
	// GrantToken marks the artefact as the result of Artefact.ClaimID by
	// Artefact.ProducedByAgent under this grant token; a token that was
	// re-issued is refused with ErrStaleGrant, a second result with
	// ErrExists.
	GrantToken string
	// InboxEntry is the stream id of the grant in the agent's inbox; with
	// a GrantToken it is acknowledged and deleted, and the work lease
	// released, in the same atomic step as the result.
	InboxEntry string
}

// ValidateArtefact checks an artefact before it is written. maxPayload is
// the payload limit in bytes. Errors wrap ErrInvalid and name the field.
func ValidateArtefact(a *Artefact, maxPayload int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: artefact: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	for _, f := range [...]struct{ name, id string }{{"id", a.ID}, {"logical_id", a.LogicalID}, {"workflow_id", a.WorkflowID}} {
		if err := ValidateID(f.id); err != nil {
			return bad("%s: %v", f.name, err)
		}
	}
	if a.ClaimID != "" {
		if err := ValidateID(a.ClaimID); err != nil {
			return bad("claim_id: %v", err)
		}
	}
	switch {
	case a.Version < 1:
		return bad("version %d must be 1 or more", a.Version)
	case a.Version == 1 && a.LogicalID != a.ID:
		return bad("version 1 must start its own thread (logical_id = id)")
	case a.Version > 1 && a.LogicalID == a.ID:
		return bad("version %d must continue an existing thread (logical_id != id)", a.Version)
	case !a.StructuralType.Valid():
		return bad("structural_type %q is not one of %v", a.StructuralType, AllStructuralTypes())
	case a.Type == "" || len(a.Type) > 128 || strings.ContainsAny(a.Type, " \t\r\n"):
		return bad("type %q must be 1-128 characters without spaces", textcut.Bytes(a.Type, 64))
	case a.ProducedByRole == "" || len(a.ProducedByRole) > 128:
		return bad("produced_by_role must be 1-128 characters")
	case len(a.Payload) > maxPayload:
		return bad("payload is %d bytes, over the limit of %d bytes (orchestrator.max_payload_bytes)", len(a.Payload), maxPayload)
	case len(a.Summary) > 1024:
		return bad("summary is %d bytes, over the limit of 1024", len(a.Summary))
	case len(a.SourceArtefacts) > MaxListLen:
		return bad("%d source artefacts exceed the limit of %d", len(a.SourceArtefacts), MaxListLen)
	case a.Depth < 0:
		return bad("depth %d is negative", a.Depth)
	case a.IsGoal() && !a.StructuralType.Claimable():
		return bad("a goal must be claimable, not %s", a.StructuralType)
	case a.Priority != 0 && !a.IsGoal():
		return bad("priority %d on an artefact that is not a goal (only goals carry one)", a.Priority)
	case a.Priority < math.MinInt32 || a.Priority > math.MaxInt32:
		// The workflow and claim decoders read 32-bit priorities, and Lua
		// prints larger numbers as 1e+16: a wider value would be stored
		// unreadable (ErrCorrupt on every later read).
		return bad("priority %d is not a 32-bit integer", a.Priority)
	}
	for _, s := range a.SourceArtefacts {
		if err := ValidateID(s); err != nil {
			return bad("source_artefacts: %v", err)
		}
	}
	// Every stored field must stay within what DecodeArtefact accepts, or
	// the artefact would be written and then be unreadable (ErrCorrupt).
	// MaxListLen ids are ~160 KB of JSON, over MaxFieldBytes.
	if n := idListJSONBytes(a.SourceArtefacts); n > MaxFieldBytes {
		return bad("source_artefacts is %d bytes as JSON, over the limit of %d", n, MaxFieldBytes)
	}
	if len(a.ProducedByAgent) > MaxFieldBytes {
		return bad("produced_by_agent is %d bytes, over the limit of %d", len(a.ProducedByAgent), MaxFieldBytes)
	}
	if metadataJSONBound(a.Metadata) > MaxFieldBytes { // only then is the exact size worth an encoding
		if meta, _ := json.Marshal(a.Metadata); len(meta) > MaxFieldBytes {
			return bad("metadata is %d bytes, over the limit of %d", len(meta), MaxFieldBytes)
		}
	}
	if a.Memory != "" {
		if len(a.Memory) > MaxFieldBytes || !json.Valid([]byte(a.Memory)) || a.Memory[0] != '{' {
			return bad("memory must be a JSON object of at most %d bytes", MaxFieldBytes)
		}
		if a.ProducedByAgent == "" {
			return bad("memory needs produced_by_agent (whose memory it is)")
		}
	}
	return nil
}

// idListJSONBytes is the size of ids encoded as a JSON list. ValidateID
// keeps ids to characters JSON never escapes, so it is exact for valid ids
// (ValidateArtefact checks those first); the encoding itself is the hot
// path's, not worth doing twice.
func idListJSONBytes(ids []string) int {
	n := 2 // []
	for i, id := range ids {
		n += len(id) + 2 // quotes
		if i > 0 {
			n++ // comma
		}
	}
	return n
}

// metadataJSONBound bounds the size of meta encoded as a JSON object from
// above: every byte escaped as \u00XX, plus quotes, colon and comma.
func metadataJSONBound(meta map[string]string) int {
	n := 4 // {} or null
	for k, v := range meta {
		n += 6*(len(k)+len(v)) + 6
	}
	return n
}

// CreateArtefact writes a new artefact with its thread entry, indexes,
// workflow counters and artefact_created event in one atomic script, and
// sets a.CreatedAtMs from the Redis clock.
//
// A goal (a.ID == a.WorkflowID) also creates its workflow, with the
// goal's a.Priority. Errors: ErrInvalid,
// ErrExists (id taken, or a second result for the same grant),
// ErrVersionConflict, ErrNotFound (unknown workflow), ErrStaleGrant,
// ErrFenced.
//
// A grant's result whose claim carries a finish plan (NewClaim.
// FinishByResult) and ends it the plain way also completes the claim in
// the same script; see create_artefact.lua.
func (c *Client) CreateArtefact(ctx context.Context, a *Artefact, auth WriteAuth) error {
	if err := ValidateArtefact(a, c.maxPayload); err != nil {
		return err
	}
	if auth.GrantToken != "" && (a.ClaimID == "" || a.ProducedByAgent == "") {
		return fmt.Errorf("%w: artefact: a grant result needs claim_id and produced_by_agent", ErrInvalid)
	}
	req := artefactRequest{
		ID: a.ID, LogicalID: a.LogicalID, Version: a.Version, WorkflowID: a.WorkflowID, ClaimID: a.ClaimID,
		StructuralType: string(a.StructuralType), Type: a.Type, ProducedByRole: a.ProducedByRole,
		Goal: a.IsGoal(), Claimable: a.StructuralType.Claimable(), Priority: a.Priority, Depth: a.Depth,
		ArtefactChannel: c.keys.ArtefactEvents(), WorkflowChannel: c.keys.WorkflowEvents(),
		ByAgent: a.ProducedByAgent,
	}
	// Keys a write does not use get a placeholder of the same slot.
	placeholder := c.keys.Artefact(a.ID)
	grants, outputs, lease, inbox, failures := placeholder, placeholder, placeholder, placeholder, placeholder
	running, waiting, replicas, claim := placeholder, placeholder, placeholder, placeholder
	if auth.GrantToken != "" {
		claim = c.keys.Claim(a.ClaimID)
		running, waiting, replicas = c.keys.AgentRunning(a.ProducedByAgent), c.keys.AgentWaiting(a.ProducedByAgent),
			c.keys.AgentReplicas(a.ProducedByAgent)
		req.Agent, req.Token, req.ClaimChannel = a.ProducedByAgent, auth.GrantToken, c.keys.ClaimEvents()
		grants, outputs, failures = c.keys.Grants(a.ClaimID), c.keys.Outputs(a.ClaimID), c.keys.Failures(a.ClaimID)
		lease, inbox = c.keys.Lease(a.ClaimID, a.ProducedByAgent), c.keys.AgentGrants(a.ProducedByAgent)
		if auth.InboxEntry != "" {
			req.InboxEntry, req.InboxGroup = auth.InboxEntry, inboxGroup
		}
	}
	if n := UsageTokens(a.Metadata); n > 0 && a.ProducedByAgent != "" {
		req.Tokens, req.TokenAgent = n, a.ProducedByAgent
	}
	if auth.Epoch > 0 {
		req.Epoch = strconv.FormatInt(auth.Epoch, 10)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("blackboard: encode request: %w", err)
	}
	keys := []string{
		c.keys.Artefact(a.ID), c.keys.Thread(a.LogicalID), c.keys.ArtefactIndex(),
		c.keys.WorkflowArtefactIndex(a.WorkflowID), c.keys.ArtefactIDIndex(), c.keys.Events(),
		c.keys.Workflow(a.WorkflowID), c.keys.WorkflowIndex(), grants, outputs, c.keys.Epoch(),
		c.keys.OrchestratorQueue(), lease, inbox, failures, running, waiting, replicas,
		c.keys.Capacity(), c.keys.Control(), c.keys.Timers(), c.keys.WorkflowMemories(a.WorkflowID),
		c.keys.AgentTokens(), claim, c.keys.ActiveClaims(), c.keys.Running(), c.keys.Waiting(),
	}
	args := append([]any{string(body)}, artefactFields(a).args()...)
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.createArtefact, keys, args...)
	if err != nil {
		return err
	}
	if err := scriptError("create_artefact", res); err != nil {
		return fmt.Errorf("artefact %s (thread %s v%d): %w", a.ID, a.LogicalID, a.Version, err)
	}
	a.CreatedAtMs, _ = strconv.ParseInt(res[1], 10, 64)
	return nil
}

// artefactRequest is create_artefact.lua's ARGV[1] (described there); a
// struct rather than a map, because encoding/json sorts and boxes a map on
// every write of the hot path.
type artefactRequest struct {
	ID              string `json:"id"`
	LogicalID       string `json:"logical_id"`
	Version         int    `json:"version"`
	WorkflowID      string `json:"workflow_id"`
	ClaimID         string `json:"claim_id"`
	StructuralType  string `json:"structural_type"`
	Type            string `json:"type"`
	ProducedByRole  string `json:"produced_by_role"`
	Goal            bool   `json:"goal"`
	Claimable       bool   `json:"claimable"`
	Priority        int    `json:"priority"`
	Depth           int    `json:"depth"`
	ArtefactChannel string `json:"artefact_channel"`
	WorkflowChannel string `json:"workflow_channel"`
	ClaimChannel    string `json:"claim_channel,omitempty"`
	Agent           string `json:"agent,omitempty"`
	Token           string `json:"token,omitempty"`
	InboxEntry      string `json:"inbox_entry,omitempty"`
	InboxGroup      string `json:"inbox_group,omitempty"`
	Tokens          int64  `json:"tokens,omitempty"`
	TokenAgent      string `json:"token_agent,omitempty"`
	Epoch           string `json:"epoch,omitempty"`
	ByAgent         string `json:"by_agent,omitempty"`
}

// GetArtefact reads one artefact. Errors: ErrNotFound, ErrCorrupt.
func (c *Client) GetArtefact(ctx context.Context, id string) (*Artefact, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	m, err := c.rdb.HGetAll(ctx, c.keys.Artefact(id)).Result()
	if err != nil {
		return nil, notFound(err, "artefact", id)
	}
	a, err := DecodeArtefact(m)
	if err != nil {
		return nil, fmt.Errorf("artefact %s: %w", id, err)
	}
	return a, nil
}

// GetArtefacts reads many artefacts in one pipelined round trip. The result
// is aligned with ids; a missing artefact is nil. Errors: ErrInvalid for a
// malformed id, ErrCorrupt for an undecodable record.
func (c *Client) GetArtefacts(ctx context.Context, ids []string) ([]*Artefact, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if err := validateIDs(ids...); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, c.keys.Artefact(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("blackboard: read artefacts: %w", err)
	}
	return decodeArtefactCmds(ids, cmds)
}

func decodeArtefactCmds(ids []string, cmds []*redis.MapStringStringCmd) ([]*Artefact, error) {
	out := make([]*Artefact, len(ids))
	for i, cmd := range cmds {
		if len(cmd.Val()) == 0 {
			continue
		}
		a, err := DecodeArtefact(cmd.Val())
		if err != nil {
			return nil, fmt.Errorf("artefact %s: %w", ids[i], err)
		}
		out[i] = a
	}
	return out, nil
}

// LatestVersion reads the newest artefact of a thread. Errors: ErrNotFound.
func (c *Client) LatestVersion(ctx context.Context, logicalID string) (*Artefact, error) {
	if err := ValidateID(logicalID); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	ids, err := c.rdb.ZRevRange(ctx, c.keys.Thread(logicalID), 0, 0).Result()
	if err != nil {
		return nil, notFound(err, "thread", logicalID)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: thread %s", ErrNotFound, logicalID)
	}
	return c.GetArtefact(ctx, ids[0])
}

// Thread reads every version of a thread, oldest first. Errors: ErrNotFound.
func (c *Client) Thread(ctx context.Context, logicalID string) ([]*Artefact, error) {
	if err := ValidateID(logicalID); err != nil {
		return nil, err
	}
	octx, cancel := c.op(ctx)
	ids, err := c.rdb.ZRange(octx, c.keys.Thread(logicalID), 0, -1).Result()
	cancel()
	if err != nil {
		return nil, notFound(err, "thread", logicalID)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: thread %s", ErrNotFound, logicalID)
	}
	arts, err := c.GetArtefacts(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i, a := range arts {
		if a == nil {
			return nil, fmt.Errorf("%w: thread %s lists artefact %s that does not exist", ErrCorrupt, logicalID, ids[i])
		}
	}
	return arts, nil
}

// ResolveLatest reads the artefacts named by ids and replaces each with the
// latest version of its thread, in as few pipelined round trips as the data
// allows: one when every artefact is the head of a thread it started (the
// common case), two or three otherwise. The result is aligned with ids; an
// id that does not exist gives nil.
func (c *Client) ResolveLatest(ctx context.Context, ids []string) ([]*Artefact, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if err := validateIDs(ids...); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	// Round trip 1: each artefact and the head of the thread it would have
	// started (logical_id == id holds for every first version).
	pipe := c.rdb.Pipeline()
	arts := make([]*redis.MapStringStringCmd, len(ids))
	heads := make([]*redis.StringSliceCmd, len(ids))
	for i, id := range ids {
		arts[i] = pipe.HGetAll(ctx, c.keys.Artefact(id))
		heads[i] = pipe.ZRevRange(ctx, c.keys.Thread(id), 0, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("blackboard: read artefacts: %w", err)
	}
	found, err := decodeArtefactCmds(ids, arts)
	if err != nil {
		return nil, err
	}
	out := make([]*Artefact, len(ids))
	latestID := make(map[int]string)
	var threadOf []int // positions whose thread head is still unknown
	for i, a := range found {
		switch {
		case a == nil:
		case a.LogicalID == a.ID && len(heads[i].Val()) > 0 && heads[i].Val()[0] == a.ID:
			out[i] = a
		case a.LogicalID == a.ID && len(heads[i].Val()) > 0:
			latestID[i] = heads[i].Val()[0]
		default:
			threadOf = append(threadOf, i)
		}
	}
	// Round trip 2 (rare): heads of threads not started by the given id.
	if len(threadOf) > 0 {
		pipe := c.rdb.Pipeline()
		cmds := make([]*redis.StringSliceCmd, len(threadOf))
		for j, i := range threadOf {
			cmds[j] = pipe.ZRevRange(ctx, c.keys.Thread(found[i].LogicalID), 0, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, fmt.Errorf("blackboard: read threads: %w", err)
		}
		for j, i := range threadOf {
			if h := cmds[j].Val(); len(h) > 0 && h[0] != found[i].ID {
				latestID[i] = h[0]
			} else {
				out[i] = found[i]
			}
		}
	}
	// Round trip 3 (rare): the newer versions themselves.
	if len(latestID) > 0 {
		pos := make([]int, 0, len(latestID))
		want := make([]string, 0, len(latestID))
		for i, id := range latestID {
			pos = append(pos, i)
			want = append(want, id)
		}
		newer, err := c.GetArtefacts(ctx, want)
		if err != nil {
			return nil, err
		}
		for j, i := range pos {
			if newer[j] != nil {
				out[i] = newer[j]
			} else {
				out[i] = found[i]
			}
		}
	}
	return out, nil
}

// ThreadHeads returns the id of the latest version of each thread, aligned
// with logicalIDs ("" for a thread that does not exist), in one pipelined
// round trip.
func (c *Client) ThreadHeads(ctx context.Context, logicalIDs []string) ([]string, error) {
	if len(logicalIDs) == 0 {
		return nil, nil
	}
	if err := validateIDs(logicalIDs...); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.StringSliceCmd, len(logicalIDs))
	for i, id := range logicalIDs {
		cmds[i] = pipe.ZRevRange(ctx, c.keys.Thread(id), 0, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("blackboard: read thread heads: %w", err)
	}
	out := make([]string, len(logicalIDs))
	for i, cmd := range cmds {
		if v := cmd.Val(); len(v) > 0 {
			out[i] = v[0]
		}
	}
	return out, nil
}
