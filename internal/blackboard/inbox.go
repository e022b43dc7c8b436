package blackboard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// MessageKind says what an inbox message asks of an agent.
type MessageKind string

// Inbox message kinds.
const (
	MessageBidRequest MessageKind = "bid_request"
	MessageGrant      MessageKind = "grant"
)

// AllMessageKinds lists every inbox message kind.
func AllMessageKinds() []MessageKind { return []MessageKind{MessageBidRequest, MessageGrant} }

// Valid reports whether k is a known kind.
func (k MessageKind) Valid() bool { return oneOf(k, AllMessageKinds()) }

// InboxMessage is work for one agent: a request to bid on a claim, or a
// grant to run it. Bid requests carry enough of the target artefact for
// the common bidding decisions (consumes patterns, own outputs) to need no
// extra read.
type InboxMessage struct {
	Agent      string
	Kind       MessageKind
	ClaimID    string
	ArtefactID string
	WorkflowID string
	// Bid request context.
	ArtefactType   string
	StructuralType StructuralType
	ProducedByRole string
	// Grant details.
	Grant GrantKind
	Token string
	// Attempt and MaxAttempts, on a grant that runs a tool again after a
	// failure, say which try this is (recorded on the result).
	Attempt     int
	MaxAttempts int
}

// InboxEntry is an InboxMessage read from the stream.
type InboxEntry struct {
	StreamID string
	InboxMessage
}

// encodeInbox appends each message's inbox stream to keys and renders the
// messages for a script, referencing their streams by KEYS index. Grants
// carry a gate (see lib.lua): the keys of their agent's slots, so that a
// grant beyond the agent's capacity waits in priority order instead of
// landing in the inbox; the shared capacity and control keys are appended
// once.
func (c *Client) encodeInbox(keys []string, msgs []InboxMessage) ([]string, []inboxArg, error) {
	out := make([]inboxArg, 0, len(msgs))
	shared := map[string]int{}
	index := func(key string) int {
		if i, ok := shared[key]; ok {
			return i
		}
		keys = append(keys, key)
		shared[key] = len(keys) // Lua indexes KEYS from 1
		return len(keys)
	}
	for _, m := range msgs {
		if err := ValidateAgentName(m.Agent); err != nil {
			return nil, nil, err
		}
		if !m.Kind.Valid() {
			return nil, nil, fmt.Errorf("%w: inbox message kind %q", ErrInvalid, m.Kind)
		}
		fields := []string{"kind", string(m.Kind), "claim_id", m.ClaimID, "artefact_id", m.ArtefactID, "workflow_id", m.WorkflowID}
		msg := inboxArg{Channel: c.keys.AgentEvents(m.Agent)}
		if m.Kind == MessageBidRequest {
			msg.Key = index(c.keys.Inbox(m.Agent))
			fields = append(fields, "type", m.ArtefactType, "structural_type", string(m.StructuralType), "produced_by_role", m.ProducedByRole)
		} else {
			msg.Key = index(c.keys.AgentGrants(m.Agent))
			fields = append(fields, "grant", string(m.Grant), "token", m.Token)
			if m.Attempt > 0 {
				fields = append(fields, "attempt", strconv.Itoa(m.Attempt), "max_attempts", strconv.Itoa(m.MaxAttempts))
			}
			msg.Gate = c.agentGate(m.Agent, index)
		}
		msg.Fields = fields
		out = append(out, msg)
	}
	return keys, out, nil
}

// agentGate renders the gate of an agent's grants, adding its keys
// through index.
func (c *Client) agentGate(agent string, index func(string) int) *gateArg {
	return &gateArg{
		Agent:    agent,
		Inbox:    index(c.keys.AgentGrants(agent)),
		Running:  index(c.keys.AgentRunning(agent)),
		Waiting:  index(c.keys.AgentWaiting(agent)),
		Replicas: index(c.keys.AgentReplicas(agent)),
		Capacity: index(c.keys.Capacity()),
		Control:  index(c.keys.Control()),
		Timers:   index(c.keys.Timers()),
	}
}

// inboxArg is one message of a script's inbox list (lib.lua deliver):
// its stream as a KEYS index, its pub/sub channel, its fields and, for a
// grant, its agent's gate. Structs rather than maps: encoding/json sorts
// and boxes maps on every claim.
type inboxArg struct {
	Key     int      `json:"key"`
	Channel string   `json:"channel"`
	Fields  []string `json:"fields"`
	Gate    *gateArg `json:"gate,omitempty"`
}

// gateArg names, by KEYS index, the keys of an agent's slots (lib.lua).
type gateArg struct {
	Agent    string `json:"agent"`
	Inbox    int    `json:"inbox"`
	Running  int    `json:"running"`
	Waiting  int    `json:"waiting"`
	Replicas int    `json:"replicas"`
	Capacity int    `json:"capacity"`
	Control  int    `json:"control"`
	Timers   int    `json:"timers"`
}

func decodeInbox(agent string, msgs []redis.XMessage) []InboxEntry {
	out := make([]InboxEntry, 0, len(msgs))
	for _, msg := range msgs {
		get := func(k string) string { s, _ := msg.Values[k].(string); return s }
		out = append(out, InboxEntry{StreamID: msg.ID, InboxMessage: InboxMessage{
			Agent:          agent,
			Kind:           MessageKind(get("kind")),
			ClaimID:        get("claim_id"),
			ArtefactID:     get("artefact_id"),
			WorkflowID:     get("workflow_id"),
			ArtefactType:   get("type"),
			StructuralType: StructuralType(get("structural_type")),
			ProducedByRole: get("produced_by_role"),
			Grant:          GrantKind(get("grant")),
			Token:          get("token"),
			Attempt:        atoi(get("attempt")),
			MaxAttempts:    atoi(get("max_attempts")),
		}})
	}
	return out
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// inboxGroup is the consumer group all replicas of an agent share, on
// both of its streams.
const inboxGroup = "cub"

// Inbox reads one agent's bid requests and grants through the shared
// consumer group.
type Inbox struct {
	c        *Client
	agent    string
	consumer string
	// lostBids and lostGrants: see LostBids and LostGrants.
	lostBids, lostGrants atomic.Bool
}

// Inbox opens agent's streams for the named consumer (one per cub process;
// reuse the name across restarts to get unacknowledged entries back).
func (c *Client) Inbox(ctx context.Context, agent, consumer string) (*Inbox, error) {
	if err := ValidateAgentName(agent); err != nil {
		return nil, err
	}
	for _, stream := range []string{c.keys.Inbox(agent), c.keys.AgentGrants(agent)} {
		if err := c.ensureGroup(ctx, stream, inboxGroup); err != nil {
			return nil, err
		}
	}
	return &Inbox{c: c, agent: agent, consumer: consumer}, nil
}

// Consumer is the consumer name this inbox reads under.
func (in *Inbox) Consumer() string { return in.consumer }

// PendingBids returns this consumer's delivered but unacknowledged bid
// requests.
func (in *Inbox) PendingBids(ctx context.Context, count int64) ([]InboxEntry, error) {
	msgs, err := in.c.readPending(ctx, &in.lostBids, in.c.keys.Inbox(in.agent), inboxGroup, in.consumer, count, true)
	return decodeInbox(in.agent, msgs), err
}

// PendingGrants returns this consumer's delivered but unacknowledged
// grants (after a restart: the work it had taken).
func (in *Inbox) PendingGrants(ctx context.Context, count int64) ([]InboxEntry, error) {
	msgs, err := in.c.readPending(ctx, &in.lostGrants, in.c.keys.AgentGrants(in.agent), inboxGroup, in.consumer, count, true)
	return decodeInbox(in.agent, msgs), err
}

// NextBids reads up to count new bid requests, blocking up to block.
func (in *Inbox) NextBids(ctx context.Context, count int64, block time.Duration) ([]InboxEntry, error) {
	msgs, err := in.c.readNew(ctx, &in.lostBids, in.c.keys.Inbox(in.agent), inboxGroup, in.consumer, count, block, nil, true)
	return decodeInbox(in.agent, msgs), err
}

// NextGrants reads up to count new grants — call it with the number of
// free slots — blocking up to block.
func (in *Inbox) NextGrants(ctx context.Context, count int64, block time.Duration) ([]InboxEntry, error) {
	msgs, err := in.c.readNew(ctx, &in.lostGrants, in.c.keys.AgentGrants(in.agent), inboxGroup, in.consumer, count, block, nil, true)
	return decodeInbox(in.agent, msgs), err
}

// LostBids reports whether a NextBids since the last successful
// PendingBids may have lost its reply (see EventConsumer.LostReplies);
// PendingBids finds what it delivered.
func (in *Inbox) LostBids() bool { return in.lostBids.Load() }

// LostGrants is LostBids for NextGrants and PendingGrants.
func (in *Inbox) LostGrants() bool { return in.lostGrants.Load() }

// DoneBids acknowledges and deletes handled bid requests. Their record
// lives on in the event stream, so the stream only holds work not yet
// done.
func (in *Inbox) DoneBids(ctx context.Context, ids ...string) error {
	return in.done(ctx, in.c.keys.Inbox(in.agent), ids)
}

// DoneGrants acknowledges and deletes grants that ended without a result
// from this consumer (stale, or delivered before).
func (in *Inbox) DoneGrants(ctx context.Context, ids ...string) error {
	return in.done(ctx, in.c.keys.AgentGrants(in.agent), ids)
}

func (in *Inbox) done(ctx context.Context, stream string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	ctx, cancel := in.c.op(ctx)
	defer cancel()
	_, err := in.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.XAck(ctx, stream, inboxGroup, ids...)
		p.XDel(ctx, stream, ids...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("blackboard: ack %s of %s: %w", stream, in.agent, err)
	}
	return nil
}

// ReclaimBids takes over bid requests that another consumer of this agent
// (a replica that died) left unacknowledged for at least minIdle.
func (in *Inbox) ReclaimBids(ctx context.Context, minIdle time.Duration, count int64) ([]InboxEntry, error) {
	return in.reclaim(ctx, in.c.keys.Inbox(in.agent), minIdle, count)
}

// ReclaimGrants takes over up to count grants — call it with the number
// of free slots — that another consumer left unacknowledged for at least
// minIdle. A live cub keeps the grants it works on fresh (see
// KeepGrantsFresh), so only a dead replica's grants come back.
func (in *Inbox) ReclaimGrants(ctx context.Context, minIdle time.Duration, count int64) ([]InboxEntry, error) {
	return in.reclaim(ctx, in.c.keys.AgentGrants(in.agent), minIdle, count)
}

func (in *Inbox) reclaim(ctx context.Context, stream string, minIdle time.Duration, count int64) ([]InboxEntry, error) {
	ctx, cancel := in.c.op(ctx)
	defer cancel()
	msgs, _, err := in.c.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: stream, Group: inboxGroup, Consumer: in.consumer,
		MinIdle: minIdle, Start: "0", Count: count,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") {
			return nil, in.c.ensureGroup(ctx, stream, inboxGroup)
		}
		return nil, fmt.Errorf("blackboard: reclaim %s of %s: %w", stream, in.agent, err)
	}
	return decodeInbox(in.agent, msgs), nil
}
