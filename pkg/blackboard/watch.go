package blackboard

import (
	"context"
	"iter"
	"time"
)

// ReadEvents reads the events after stream id after ("0" for the start
// of the stream, or an Event's StreamID), at most count, blocking up to
// block for the first one when block > 0. It returns no events and no
// error when the block time passes. Events of every workflow come in
// stream order; the stream is trimmed (events.max_length, max_age), so
// the oldest may be gone.
func (c *Client) ReadEvents(ctx context.Context, after string, count int64, block time.Duration) ([]Event, error) {
	return c.bb.ReadEvents(ctx, after, count, block)
}

// LastEventID returns the stream id of the newest event ("0-0" when the
// stream is empty): read after it for only what comes next.
func (c *Client) LastEventID(ctx context.Context) (string, error) {
	return c.bb.LastEventID(ctx)
}

// Blocking reads of WatchWorkflow: how long one waits (unless the
// Client says otherwise), how many events it takes at once.
const (
	watchBlock = 5 * time.Second
	watchPage  = 200
)

// WatchWorkflow yields the events of one workflow with stream ids after
// after ("0" for all the stream still holds, LastEventID for only new
// ones), in order, as they are written, and ends after the workflow's
// workflow_completed event, whose "status" field is how it ended. It
// blocks on the stream rather than polling; when the stream stays quiet
// it reads the workflow, so that one that ended while its completion
// event was trimmed away does not keep the watch open. (A late approval
// decision may reopen an ended workflow: watch again from the last
// event's StreamID.)
//
// A read that fails is yielded as an error and ends the iteration; so
// does ctx ending. Errors: ErrNotFound (no such workflow).
func (c *Client) WatchWorkflow(ctx context.Context, workflowID, after string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if _, err := c.bb.GetWorkflow(ctx, workflowID); err != nil {
			yield(Event{}, err)
			return
		}
		block := c.watchBlock
		for {
			events, err := c.bb.ReadEvents(ctx, after, watchPage, block)
			if err != nil {
				yield(Event{}, err)
				return
			}
			for _, e := range events {
				after = e.StreamID
				if e.WorkflowID != workflowID {
					continue
				}
				if !yield(e, nil) || e.Type == EventWorkflowCompleted {
					return
				}
			}
			switch {
			case len(events) > 0:
				continue
			case block == 0:
				return // ended, and the last events are delivered
			}
			wf, err := c.bb.GetWorkflow(ctx, workflowID)
			if err != nil {
				yield(Event{}, err)
				return
			}
			if wf.Status.Final() {
				// Its end and its completion event are one write: the
				// event, if not trimmed, came after the read that saw
				// nothing. Deliver what is left without blocking.
				block = 0
			}
		}
	}
}
