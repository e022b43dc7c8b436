package blackboard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// EventType names an entry of the instance's event stream.
type EventType string

// Event types. The scripts emit the first group themselves; the others are
// supplied by the orchestrator and cubs with the state change they describe.
const (
	EventArtefactCreated   EventType = "artefact_created"
	EventWorkflowStarted   EventType = "workflow_started"
	EventWorkflowCompleted EventType = "workflow_completed"
	EventClaimCreated      EventType = "claim_created"
	EventClaimTransitioned EventType = "claim_transitioned"
	EventBidSubmitted      EventType = "bid_submitted"
	// EventBidsComplete is queued for the orchestrator (never in the audit
	// stream) when the last expected bid of a claim arrives.
	EventBidsComplete EventType = "bids_complete"
	// EventClaimCompletedByResult is queued for the orchestrator (never in
	// the audit stream, which has claim_completed with completed_by=result)
	// when a result completed its claim in its own script
	// (create_artefact.lua): the orchestrator only counts and logs it.
	EventClaimCompletedByResult EventType = "claim_completed_by_result"

	EventBidTimeout                   EventType = "bid_timeout"
	EventBidsDecided                  EventType = "bids_decided"
	EventClaimGranted                 EventType = "claim_granted"
	EventClaimCompleted               EventType = "claim_completed"
	EventClaimTerminated              EventType = "claim_terminated"
	EventReviewApproved               EventType = "review_approved"
	EventReviewRejected               EventType = "review_rejected"
	EventFeedbackClaimCreated         EventType = "feedback_claim_created"
	EventArtefactReworked             EventType = "artefact_reworked"
	EventClaimTerminatedMaxIterations EventType = "claim_terminated_max_iterations"
	EventClaimTerminatedMissingAgent  EventType = "claim_terminated_missing_agent"
	EventLeaseLost                    EventType = "lease_lost"
	// EventGrantHandedBack: a draining cub gave a grant back unfinished
	// (its drain time ran out); the work is granted again without
	// counting an attempt (fields: token, handbacks).
	EventGrantHandedBack               EventType = "grant_handed_back"
	EventBudgetExceeded                EventType = "budget_exceeded"
	EventAgentRegistered               EventType = "agent_registered"
	EventLeaderElected                 EventType = "leader_elected"
	EventToolFailed                    EventType = "tool_failed"
	EventClaimTerminatedWorkflowEnded  EventType = "claim_terminated_workflow_ended"
	EventClaimTerminatedAgentFailure   EventType = "claim_terminated_agent_failure"
	EventClaimTerminatedLeaseExhausted EventType = "claim_terminated_lease_exhausted"
	// EventClaimTerminatedNoBids ends a goal's claim that no agent bid
	// on; its workflow fails with the goal's type in the reason.
	EventClaimTerminatedNoBids EventType = "claim_terminated_no_bids"
	// EventBidsRequestedAgain: consensus passed its deadline while
	// configured agents whose answer it needs had not answered, and asked
	// them again (fields: agents, asked, round, waiting_ms).
	EventBidsRequestedAgain EventType = "bids_requested_again"
	// EventClaimTerminatedNoAnswer ends a claim whose needed agents never
	// answered within orchestrator.no_bid_timeout; its workflow fails
	// naming them (field agents).
	EventClaimTerminatedNoAnswer EventType = "claim_terminated_no_answer"

	// Approval gates and learning. approval_decided and
	// learning_recorded are emitted by their scripts.
	EventApprovalRequested       EventType = "approval_requested"
	EventApprovalDecided         EventType = "approval_decided"
	EventApprovalApplied         EventType = "approval_applied"
	EventApprovalExpired         EventType = "approval_expired"
	EventClaimTerminatedRejected EventType = "claim_terminated_rejected"
	EventLearnClaimCreated       EventType = "learn_claim_created"
	EventLearningRecorded        EventType = "learning_recorded"

	// Scheduling and control. claim_waiting, paused and resumed
	// are emitted by their scripts; capacity_freed is queued for the
	// orchestrator only (never in the audit stream).
	EventClaimWaiting      EventType = "claim_waiting"
	EventCapacityFreed     EventType = "capacity_freed"
	EventPaused            EventType = "paused"
	EventResumed           EventType = "resumed"
	EventRetryScheduled    EventType = "retry_scheduled"
	EventRetryGranted      EventType = "retry_granted"
	EventWorkflowEscalated EventType = "workflow_escalated"
	EventWorkflowReopened  EventType = "workflow_reopened"
	// EventClaimRetried: `sett retry` put a failed claim back in its phase
	// with a fresh attempt budget (retry_claim.lua).
	EventClaimRetried EventType = "claim_retried"

	// Memory and review policy.
	EventMemoryMerged   EventType = "memory_merged"
	EventReviewDecision EventType = "review_decision"
	// EventMemoryWarning: a tool's agent memory broke the contract and
	// the cub repaired (action=repaired, cuts) or dropped (action=dropped)
	// it; the result was stored and the work goes on.
	EventMemoryWarning EventType = "memory_warning"
	// EventReviewSkipped: a granted reviewer's review is not awaited any
	// more (reason=advisory_deadline: an advisory reviewer past its own
	// deadline); its grant is withdrawn and the phase decides without it.
	EventReviewSkipped EventType = "review_skipped"
)

// Event is one entry of the event stream: the audit log and the
// orchestrator's input.
type Event struct {
	// StreamID is the Redis stream id (set when read).
	StreamID   string
	Type       EventType
	TsMs       int64
	WorkflowID string
	ClaimID    string
	ArtefactID string
	Agent      string
	// Fields holds every other field, e.g. status, bid, reason, iteration.
	Fields map[string]string
}

// Field returns one extra field, "" when absent.
func (e Event) Field(name string) string { return e.Fields[name] }

// channelFor picks the pub/sub channel an event is announced on.
func (k Keys) channelFor(t EventType) string {
	switch {
	case strings.HasPrefix(string(t), "workflow_"):
		return k.WorkflowEvents()
	case strings.HasPrefix(string(t), "artefact_"):
		return k.ArtefactEvents()
	}
	return k.ClaimEvents()
}

// encodeEvents renders caller-supplied events for a script: a channel, the
// name and a flat field list with the ids first and the rest sorted.
func (c *Client) encodeEvents(events []Event) []map[string]any {
	out := make([]map[string]any, 0, len(events))
	for _, e := range events {
		fields := []string{
			"workflow_id", e.WorkflowID, "claim_id", e.ClaimID,
			"artefact_id", e.ArtefactID, "agent", e.Agent,
		}
		for _, k := range sortedKeys(e.Fields) {
			fields = append(fields, k, e.Fields[k])
		}
		out = append(out, map[string]any{
			"channel": c.keys.channelFor(e.Type),
			"name":    string(e.Type),
			"fields":  fields,
		})
	}
	return out
}

// decodeEvent turns a stream message into an Event.
func decodeEvent(msg redis.XMessage) Event {
	e := Event{StreamID: msg.ID, Fields: map[string]string{}}
	for k, v := range msg.Values {
		s, _ := v.(string)
		switch k {
		case "event":
			e.Type = EventType(s)
		case "ts":
			e.TsMs, _ = strconv.ParseInt(s, 10, 64)
		case "workflow_id":
			e.WorkflowID = s
		case "claim_id":
			e.ClaimID = s
		case "artefact_id":
			e.ArtefactID = s
		case "agent":
			e.Agent = s
		default:
			e.Fields[k] = s
		}
	}
	return e
}

func decodeEvents(msgs []redis.XMessage) []Event {
	out := make([]Event, len(msgs))
	for i, m := range msgs {
		out[i] = decodeEvent(m)
	}
	return out
}

// AppendEvent appends one event to the stream (and its pub/sub channel)
// outside of any state change, e.g. agent_registered. The server clock
// stamps it.
func (c *Client) AppendEvent(ctx context.Context, e Event) (string, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	return c.appendEvent(ctx, c.rdb, e)
}

func (c *Client) appendEvent(ctx context.Context, cmd redis.Cmdable, e Event) (string, error) {
	now, err := c.rdb.Time(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("blackboard: time: %w", err)
	}
	values := []any{"event", string(e.Type), "ts", strconv.FormatInt(now.UnixMilli(), 10)}
	for _, kv := range [][2]string{{"workflow_id", e.WorkflowID}, {"claim_id", e.ClaimID}, {"artefact_id", e.ArtefactID}, {"agent", e.Agent}} {
		if kv[1] != "" {
			values = append(values, kv[0], kv[1])
		}
	}
	for _, k := range sortedKeys(e.Fields) {
		values = append(values, k, e.Fields[k])
	}
	id, err := cmd.XAdd(ctx, &redis.XAddArgs{Stream: c.keys.Events(), Values: values}).Result()
	if err != nil {
		return "", fmt.Errorf("blackboard: append event %s: %w", e.Type, err)
	}
	return id, nil
}

// ReadEvents reads events after the stream id `after` ("0" for the start,
// "$" for only new ones), blocking up to block for the first one when
// block > 0. It returns no events and no error when the block time passes.
func (c *Client) ReadEvents(ctx context.Context, after string, count int64, block time.Duration) ([]Event, error) {
	bctx, cancel := c.blocking(ctx, block)
	defer cancel()
	args := &redis.XReadArgs{Streams: []string{c.keys.Events(), after}, Count: count, Block: -1}
	if block > 0 {
		args.Block = block
	}
	res, err := c.rdb.XRead(bctx, args).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("blackboard: read events after %s: %w", after, err)
	}
	if len(res) == 0 {
		return nil, nil
	}
	return decodeEvents(res[0].Messages), nil
}

// RangeEvents reads events with stream ids in [start, end] ("-" and "+"
// for the open ends), at most count (0 = all), oldest first.
func (c *Client) RangeEvents(ctx context.Context, start, end string, count int64) ([]Event, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	var msgs []redis.XMessage
	var err error
	if count > 0 {
		msgs, err = c.rdb.XRangeN(ctx, c.keys.Events(), start, end, count).Result()
	} else {
		msgs, err = c.rdb.XRange(ctx, c.keys.Events(), start, end).Result()
	}
	if err != nil {
		return nil, fmt.Errorf("blackboard: range events %s..%s: %w", start, end, err)
	}
	return decodeEvents(msgs), nil
}

// LastEventID returns the id of the newest event, or "0-0" when the stream
// is empty.
func (c *Client) LastEventID(ctx context.Context) (string, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	msgs, err := c.rdb.XRevRangeN(ctx, c.keys.Events(), "+", "-", 1).Result()
	if err != nil {
		return "", fmt.Errorf("blackboard: read last event: %w", err)
	}
	if len(msgs) == 0 {
		return "0-0", nil
	}
	return msgs[0].ID, nil
}

// EventConsumer reads a stream of events through a consumer group: each
// event is delivered until it is acknowledged, across restarts.
type EventConsumer struct {
	c        *Client
	stream   string
	group    string
	consumer string
	// trim deletes acknowledged entries (the orchestrator's queue, whose
	// history lives in the audit stream).
	trim bool
	// lost: see LostReplies.
	lost atomic.Bool
}

// EventConsumer returns a consumer of the audit event stream in group
// (created at the start of the stream when missing) under the given
// consumer name. A restarted process that uses the same consumer name gets
// its unacknowledged events back first.
func (c *Client) EventConsumer(ctx context.Context, group, consumer string) (*EventConsumer, error) {
	if err := c.ensureGroup(ctx, c.keys.Events(), group); err != nil {
		return nil, err
	}
	return &EventConsumer{c: c, stream: c.keys.Events(), group: group, consumer: consumer}, nil
}

// QueueConsumer returns a consumer of the orchestrator's queue (see
// Keys.OrchestratorQueue): only the events the orchestrator acts on.
// Acknowledged entries are deleted.
func (c *Client) QueueConsumer(ctx context.Context, group, consumer string) (*EventConsumer, error) {
	if err := c.ensureGroup(ctx, c.keys.OrchestratorQueue(), group); err != nil {
		return nil, err
	}
	return &EventConsumer{c: c, stream: c.keys.OrchestratorQueue(), group: group, consumer: consumer, trim: true}, nil
}

func (c *Client) ensureGroup(ctx context.Context, stream, group string) error {
	ctx, cancel := c.op(ctx)
	defer cancel()
	err := c.rdb.XGroupCreateMkStream(ctx, stream, group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("blackboard: create group %s on %s: %w", group, stream, err)
	}
	return nil
}

// Pending returns this consumer's delivered but unacknowledged events
// (after a restart), at most count.
func (ec *EventConsumer) Pending(ctx context.Context, count int64) ([]Event, error) {
	msgs, err := ec.c.readPending(ctx, &ec.lost, ec.stream, ec.group, ec.consumer, count, ec.trim)
	return decodeEvents(msgs), err
}

// Next acknowledges ack (ids of handled events) and reads up to count new
// events, blocking up to block — in one round trip when block is at most
// MaxPipelinedBlock; a longer block takes a second command when nothing is
// waiting.
func (ec *EventConsumer) Next(ctx context.Context, ack []string, count int64, block time.Duration) ([]Event, error) {
	msgs, err := ec.c.readNew(ctx, &ec.lost, ec.stream, ec.group, ec.consumer, count, block, ack, ec.trim)
	return decodeEvents(msgs), err
}

// LostReplies reports whether a Next since the last successful Pending
// failed or saw a connection of the client fail (go-redis then retries
// on another connection without saying so): Redis may have delivered
// entries to this consumer whose reply never arrived. They wait in the
// consumer's pending list, and the next successful Pending returns them
// and clears the report. A failure elsewhere in the client also counts;
// the cost of that is one needless read.
func (ec *EventConsumer) LostReplies() bool { return ec.lost.Load() }

// Ack acknowledges handled events.
func (ec *EventConsumer) Ack(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	ctx, cancel := ec.c.op(ctx)
	defer cancel()
	_, err := ec.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.XAck(ctx, ec.stream, ec.group, ids...)
		if ec.trim {
			p.XDel(ctx, ec.stream, ids...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("blackboard: ack events: %w", err)
	}
	return nil
}

// MaxPipelinedBlock is the longest blocking read sent in the same pipeline
// as its acknowledgements (less when the client's ReadTimeout is short).
// go-redis bounds a whole pipeline by the client's ReadTimeout (3s by
// default) and honours a blocking command's own timeout only when the
// command is sent alone; a longer block is sent on its own after a
// non-blocking read with the acknowledgements.
const MaxPipelinedBlock = 2 * time.Second

// readNew reads the group's new entries like readGroup and sets lost when
// the read failed or a connection of the client failed meanwhile (its
// reply may be lost while Redis delivered its entries: read_watch.go).
func (c *Client) readNew(ctx context.Context, lost *atomic.Bool, stream, group, consumer string, count int64, block time.Duration, ack []string, trim bool) ([]redis.XMessage, error) {
	failed := c.failedReads.Load()
	msgs, err := c.readGroup(ctx, stream, group, consumer, ">", count, block, ack, trim)
	if err != nil || c.failedReads.Load() != failed {
		lost.Store(true)
	}
	return msgs, err
}

// readPending reads the consumer's pending entries and, when that
// succeeded, clears lost: the read returned whatever a lost reply had
// delivered.
func (c *Client) readPending(ctx context.Context, lost *atomic.Bool, stream, group, consumer string, count int64, trim bool) ([]redis.XMessage, error) {
	msgs, err := c.readGroup(ctx, stream, group, consumer, "0", count, 0, nil, trim)
	if err == nil {
		lost.Store(false)
	}
	return msgs, err
}

// readGroup acknowledges ack (and deletes it when trim) and reads the
// group, blocking up to block.
func (c *Client) readGroup(ctx context.Context, stream, group, consumer, from string, count int64, block time.Duration, ack []string, trim bool) ([]redis.XMessage, error) {
	args := &redis.XReadGroupArgs{Group: group, Consumer: consumer, Streams: []string{stream, from}, Count: count, Block: -1}
	if block > 0 && (len(ack) == 0 || block <= c.pipeBlock) {
		args.Block = block
		return c.readGroupOnce(ctx, stream, group, args, ack, trim)
	}
	msgs, err := c.readGroupOnce(ctx, stream, group, args, ack, trim)
	if err != nil || len(msgs) > 0 || block <= 0 {
		return msgs, err
	}
	args.Block = block
	return c.readGroupOnce(ctx, stream, group, args, nil, trim)
}

// readGroupOnce sends one XREADGROUP, pipelined after an XACK (and XDEL)
// of ack when there is anything to acknowledge.
func (c *Client) readGroupOnce(ctx context.Context, stream, group string, args *redis.XReadGroupArgs, ack []string, trim bool) ([]redis.XMessage, error) {
	bctx, cancel := c.blocking(ctx, max(args.Block, 0))
	defer cancel()
	var res []redis.XStream
	var err error
	if len(ack) == 0 {
		res, err = c.rdb.XReadGroup(bctx, args).Result()
	} else {
		var read *redis.XStreamSliceCmd
		_, err = c.rdb.Pipelined(bctx, func(p redis.Pipeliner) error {
			p.XAck(bctx, stream, group, ack...)
			if trim {
				p.XDel(bctx, stream, ack...)
			}
			read = p.XReadGroup(bctx, args)
			return nil
		})
		if err == nil || errors.Is(err, redis.Nil) {
			res, err = read.Val(), nil
		}
	}
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil && strings.HasPrefix(err.Error(), "NOGROUP") {
		// The stream or group vanished (Redis restarted without data, or
		// an operator deleted it): recreate and let the caller read again.
		if gerr := c.ensureGroup(ctx, stream, group); gerr != nil {
			return nil, gerr
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("blackboard: read group %s on %s: %w", group, stream, err)
	}
	if len(res) == 0 {
		return nil, nil
	}
	return res[0].Messages, nil
}

// Notification is one pub/sub message.
type Notification struct {
	Channel string
	Payload string
}

// Subscription is a live pub/sub subscription. Pub/sub is a doorbell: a
// missed notification loses nothing, because the stream holds every event.
type Subscription struct {
	ps   *redis.PubSub
	ch   chan Notification
	done chan struct{}
	once sync.Once
}

// Subscribe subscribes to channels (full names from Keys) and returns once
// Redis confirmed the subscription.
func (c *Client) Subscribe(ctx context.Context, channels ...string) (*Subscription, error) {
	ps := c.rdb.Subscribe(ctx, channels...)
	octx, cancel := c.op(ctx)
	defer cancel()
	if _, err := ps.Receive(octx); err != nil {
		_ = ps.Close()
		return nil, fmt.Errorf("blackboard: subscribe %v: %w", channels, err)
	}
	s := &Subscription{ps: ps, ch: make(chan Notification, 64), done: make(chan struct{})}
	go func() {
		defer close(s.ch)
		for m := range ps.Channel() {
			select {
			case s.ch <- Notification{Channel: m.Channel, Payload: m.Payload}:
			case <-s.done:
				return
			}
		}
	}()
	return s, nil
}

// C delivers notifications until Close.
func (s *Subscription) C() <-chan Notification { return s.ch }

// Close ends the subscription; safe to call twice.
func (s *Subscription) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		err = s.ps.Close()
	})
	return err
}
