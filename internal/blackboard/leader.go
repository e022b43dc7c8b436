package blackboard

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Leadership is the outcome of a leader-lease attempt.
type Leadership struct {
	// Leading is true when the caller holds the lease.
	Leading bool
	// Epoch is the fencing token to write with while leading.
	Epoch int64
	// Acquired is true when this call took the lease (a new epoch).
	Acquired bool
	// Reclaimed is true when the acquisition took the lease over from an
	// earlier boot of the same identity (ReclaimLeadership).
	Reclaimed bool
	// Holder names the current leader when the caller is not leading.
	Holder string
}

// AcquireLeadership takes or renews the orchestrator leader lease for id
// with ttl. Every acquisition increments the epoch, fencing out writes of
// any earlier leader. Errors: ErrInvalid for a ttl under a millisecond.
func (c *Client) AcquireLeadership(ctx context.Context, id string, ttl time.Duration) (Leadership, error) {
	return c.leadership(ctx, id, ttl, "")
}

// ReclaimLeadership is AcquireLeadership for an orchestrator that has just
// started and knows its stable identity: id must be "<identity>#<boot>",
// and a lease held by "<identity>#<another boot>" is taken over at once,
// with a new epoch, instead of after its TTL. Call it only when no other
// live process can have the same identity — the caller's proof that the
// holder is its own dead predecessor. Errors: ErrInvalid for a ttl under
// a millisecond or an id that is not "<identity>#<boot>".
func (c *Client) ReclaimLeadership(ctx context.Context, id, identity string, ttl time.Duration) (Leadership, error) {
	boot, ok := strings.CutPrefix(id, identity+"#")
	if identity == "" || !ok || boot == "" {
		return Leadership{}, fmt.Errorf("%w: leader id %q is not <identity>#<boot> for identity %q", ErrInvalid, id, identity)
	}
	return c.leadership(ctx, id, ttl, identity)
}

func (c *Client) leadership(ctx context.Context, id string, ttl time.Duration, identity string) (Leadership, error) {
	// The script reads a zero TTL as a resignation, which would come back
	// as "leading with epoch 0" — and epoch 0 writes are never fenced.
	if ttl < time.Millisecond {
		return Leadership{}, fmt.Errorf("%w: leader lease ttl %v must be at least 1ms", ErrInvalid, ttl)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.leader, []string{c.keys.Leader(), c.keys.Epoch(), c.keys.Events()}, id, ttl.Milliseconds(), identity)
	if err != nil {
		return Leadership{}, err
	}
	if res[0] == "HELD" {
		return Leadership{Holder: res[1]}, nil
	}
	epoch, _ := strconv.ParseInt(res[1], 10, 64)
	how := ""
	if len(res) > 2 {
		how = res[2]
	}
	return Leadership{Leading: true, Epoch: epoch, Acquired: how == "acquired" || how == "reclaimed", Reclaimed: how == "reclaimed"}, nil
}

// Resign releases the leader lease if id holds it, so a standby can take
// over at once instead of waiting for the TTL.
func (c *Client) Resign(ctx context.Context, id string) error {
	ctx, cancel := c.op(ctx)
	defer cancel()
	_, err := c.run(ctx, c.scripts.leader, []string{c.keys.Leader(), c.keys.Epoch(), c.keys.Events()}, id, 0)
	return err
}

// OperatorEpoch stands for the leader epoch in a write made by an
// operator rather than an orchestrator (sett cancel ending a workflow):
// such a write is never fenced. Only EndWorkflow accepts it.
const OperatorEpoch int64 = -1

// DueTimers is what PopTimers returns.
type DueTimers struct {
	// NowMs is the Redis clock when the timers were taken.
	NowMs int64
	// NextDueMs is the earliest remaining due time, or -1 when none.
	NextDueMs int64
	// VisibleAgainMs is when the popped timers fire again unless
	// AckTimer removes them first (pass it to AckTimer).
	VisibleAgainMs int64
	// ClaimIDs are the claims whose timers fired.
	ClaimIDs []string
}

// PopTimers atomically takes up to limit timers that are due by the Redis
// clock: they are hidden for visibility (no other caller gets them) and
// fire again after it unless AckTimer removes them once their effect is
// stored — a caller that dies in between loses nothing. Errors: ErrFenced
// when epoch is stale, ErrNoEpoch when it is zero, ErrInvalid for a
// visibility under a millisecond.
func (c *Client) PopTimers(ctx context.Context, epoch int64, limit int, visibility time.Duration) (DueTimers, error) {
	if visibility < time.Millisecond {
		return DueTimers{}, fmt.Errorf("%w: timer visibility %v is under 1ms", ErrInvalid, visibility)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.popTimers, []string{c.keys.Timers(), c.keys.Epoch()}, epochArg(epoch), limit, visibility.Milliseconds())
	if err != nil {
		return DueTimers{}, err
	}
	if err := scriptError("pop_timers", res); err != nil {
		return DueTimers{}, err
	}
	now, _ := strconv.ParseInt(res[1], 10, 64)
	next, _ := strconv.ParseFloat(res[2], 64)
	again, _ := strconv.ParseInt(res[3], 10, 64)
	return DueTimers{NowMs: now, NextDueMs: int64(next), VisibleAgainMs: again, ClaimIDs: res[4:]}, nil
}

// AckTimer removes claimID's timer popped by PopTimers (hidden until
// visibleAgainMs) now that its effect is stored. A timer re-armed
// meanwhile is kept; removed reports whether this call removed it.
// Errors: ErrFenced, ErrNoEpoch.
func (c *Client) AckTimer(ctx context.Context, epoch int64, claimID string, visibleAgainMs int64) (removed bool, err error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.ackTimer, []string{c.keys.Timers(), c.keys.Epoch()}, epochArg(epoch), claimID, visibleAgainMs)
	if err != nil {
		return false, err
	}
	if err := scriptError("ack_timer", res); err != nil {
		return false, err
	}
	return len(res) > 1 && res[1] == "1", nil
}

// ArmTimer sets a claim's timer to fire at atMs (Redis clock), replacing
// any earlier setting.
func (c *Client) ArmTimer(ctx context.Context, claimID string, atMs int64) error {
	ctx, cancel := c.op(ctx)
	defer cancel()
	if err := c.rdb.ZAdd(ctx, c.keys.Timers(), zMember(float64(atMs), claimID)).Err(); err != nil {
		return fmt.Errorf("blackboard: arm timer of claim %s: %w", claimID, err)
	}
	return nil
}

// EndWorkflow ends a running workflow with status and reason, emitting
// workflow_completed once. It returns ended=false (and no error) when the
// workflow had already ended. Events are appended in the same atomic step
// when (and only when) this call ends the workflow, so an end and the
// events that explain it are never separated by a crash. Errors:
// ErrNotFound, ErrFenced, ErrInvalid.
func (c *Client) EndWorkflow(ctx context.Context, workflowID string, status WorkflowStatus, reason string, epoch int64, events ...Event) (bool, error) {
	if err := ValidateID(workflowID); err != nil {
		return false, err
	}
	if !status.Valid() || !status.Final() {
		return false, fmt.Errorf("%w: workflow end status %q", ErrInvalid, status)
	}
	req := map[string]any{
		"workflow_id": workflowID, "status": string(status), "reason": reason,
		"workflow_channel": c.keys.WorkflowEvents(),
	}
	if epoch != 0 {
		req["epoch"] = strconv.FormatInt(epoch, 10)
	}
	if len(events) > 0 {
		req["events"] = c.encodeEvents(events)
	}
	body, _ := json.Marshal(req)
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.endWorkflow,
		[]string{c.keys.Workflow(workflowID), c.keys.Events(), c.keys.Epoch(), c.keys.OrchestratorQueue()}, string(body))
	if err != nil {
		return false, err
	}
	if res[0] == "WORKFLOW_ENDED" {
		return false, nil
	}
	if err := scriptError("end_workflow", res); err != nil {
		return false, fmt.Errorf("workflow %s: %w", workflowID, err)
	}
	return true, nil
}

// GetWorkflow reads one workflow. Errors: ErrNotFound, ErrCorrupt.
func (c *Client) GetWorkflow(ctx context.Context, id string) (*Workflow, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	m, err := c.rdb.HGetAll(ctx, c.keys.Workflow(id)).Result()
	if err != nil {
		return nil, notFound(err, "workflow", id)
	}
	w, err := DecodeWorkflow(m)
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %w", id, err)
	}
	return w, nil
}
