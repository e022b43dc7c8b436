package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
)

// outsideView times hops as a client outside the daemons sees them, with
// nothing but a Redis connection: from just before the goal write to the
// arrival of the result artefact's announcement on the artefact pub/sub
// channel. It also times the goal write itself (the CreateArtefact round
// trip). The internal hop figure stops at the tool's main(); this one
// includes the tool, the result write and the pub/sub delivery.
func (r *runner) outsideView(ctx context.Context, s *stack) error {
	sub := s.Raw.Subscribe(ctx, s.BB.Keys().ArtefactEvents())
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription confirmation
		return fmt.Errorf("bench: subscribe: %w", err)
	}
	msgs := sub.Channel()
	var writes, hops []float64
	for i := 0; i < r.opts.HopWarmup+r.opts.HopSamples; i++ {
		g := blackboard.NewGoal(fmt.Sprintf("outside %d", i), 0, "user", nil)
		start := time.Now()
		if err := s.BB.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
			return err
		}
		written := time.Now()
		announced, err := waitResultAnnounced(ctx, msgs, g.ID)
		if err != nil {
			return fmt.Errorf("%w (stack %s, logs in %s)", err, s.Name, s.Dir)
		}
		if _, err := s.WaitCompleted(ctx, g.ID); err != nil {
			return err
		}
		if i < r.opts.HopWarmup {
			continue
		}
		writes = append(writes, ms(written.Sub(start)))
		hops = append(hops, ms(announced.Sub(start)))
	}
	f := NewFigure("goal_write", "goal write (CreateArtefact of a goal)", "ms", "writes", writes, "p50 ≤ 0.5 ms", Check{Stat: StatP50, Value: 0.5})
	f.Note = "one client round trip: the create_artefact script (artefact, thread, indexes, workflow, event, orchestrator queue, pub/sub)"
	r.add(f)
	f = NewFigure("end_to_end_outside", "end to end seen from outside, 1 agent", "ms", "hops", hops, "p50 ≤ 5 ms", Check{Stat: StatP50, Value: 5})
	f.Note = "harness clock: before the goal write → the no-op tool's result announced on the artefact pub/sub channel (SUBSCRIBE from a plain Redis client)"
	r.add(f)
	return nil
}

// waitResultAnnounced returns when the first non-goal artefact of
// workflow wf is announced on the artefact channel.
func waitResultAnnounced(ctx context.Context, msgs <-chan *redis.Message, wf string) (time.Time, error) {
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return time.Time{}, fmt.Errorf("bench: artefact channel closed while waiting for workflow %s", wf)
			}
			at := time.Now()
			var doc struct {
				WorkflowID string `json:"workflow_id"`
				ArtefactID string `json:"artefact_id"`
				Type       string `json:"type"`
			}
			if json.Unmarshal([]byte(m.Payload), &doc) != nil {
				continue
			}
			if doc.WorkflowID == wf && doc.ArtefactID != wf && doc.Type == noopType {
				return at, nil
			}
		case <-timeout.C:
			return time.Time{}, fmt.Errorf("bench: no result of workflow %s announced within 60s", wf)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}
