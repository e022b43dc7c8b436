package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
)

// observedEvent is an event of the stream and the host time at which the
// harness received it.
type observedEvent struct {
	blackboard.Event
	At time.Time
}

// eventWatcher follows an instance's event stream with blocking reads
// (never polling) and keeps, per workflow, every event with the time it
// arrived. Blocked readers are served by Redis as soon as the writing
// script ends, so an arrival time is the write time plus one loopback
// delivery; while the watcher handles a batch, later events wait for its
// next read (one round trip).
//
// The watcher has a connection of its own: closing it is the only way to
// end a blocking read at once (go-redis does not abandon a read when its
// context is cancelled).
//
// Safe for concurrent use.
type eventWatcher struct {
	bb     *blackboard.Client
	rdb    redis.UniversalClient
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	byWF    map[string][]observedEvent
	ended   map[string]observedEvent
	waiters map[string][]chan struct{}
	err     error
}

// startEventWatcher starts following the stream of instance on the Redis
// at url from its current end; counter (may be nil) counts its requests
// as the harness's own.
func startEventWatcher(ctx context.Context, url, instance string, counter *clientCounter) (*eventWatcher, error) {
	ro, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	ro.PoolSize = 2
	return startEventWatcherOn(ctx, redis.NewClient(ro), blackboard.Options{Instance: instance}, counter)
}

// startEventWatcherOn is startEventWatcher on a client of any topology
// (opts carries the instance and, for a cluster, HashTag); the watcher
// owns rdb and closes it.
func startEventWatcherOn(ctx context.Context, rdb redis.UniversalClient, opts blackboard.Options, counter *clientCounter) (*eventWatcher, error) {
	if counter != nil {
		rdb.AddHook(counter)
	}
	bb, err := blackboard.New(ctx, rdb, opts)
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	after, err := bb.LastEventID(ctx)
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &eventWatcher{bb: bb, rdb: rdb, cancel: cancel, done: make(chan struct{}),
		byWF: map[string][]observedEvent{}, ended: map[string]observedEvent{}, waiters: map[string][]chan struct{}{}}
	go w.run(ctx, after)
	return w, nil
}

func (w *eventWatcher) run(ctx context.Context, after string) {
	defer close(w.done)
	for ctx.Err() == nil {
		events, err := w.bb.ReadEvents(ctx, after, 1000, 2*time.Second)
		at := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				w.mu.Lock()
				w.err = err
				for id, ws := range w.waiters {
					for _, c := range ws {
						close(c)
					}
					delete(w.waiters, id)
				}
				w.mu.Unlock()
			}
			return
		}
		w.mu.Lock()
		for _, e := range events {
			after = e.StreamID
			if e.WorkflowID == "" {
				continue
			}
			o := observedEvent{Event: e, At: at}
			w.byWF[e.WorkflowID] = append(w.byWF[e.WorkflowID], o)
			if e.Type == blackboard.EventWorkflowCompleted {
				w.ended[e.WorkflowID] = o
				for _, c := range w.waiters[e.WorkflowID] {
					close(c)
				}
				delete(w.waiters, e.WorkflowID)
			}
		}
		w.mu.Unlock()
	}
}

// WaitWorkflow blocks until the workflow_completed event of workflow id
// arrives (whatever its status) and returns it.
func (w *eventWatcher) WaitWorkflow(ctx context.Context, id string, timeout time.Duration) (observedEvent, error) {
	w.mu.Lock()
	if o, ok := w.ended[id]; ok {
		w.mu.Unlock()
		return o, nil
	}
	if w.err != nil {
		w.mu.Unlock()
		return observedEvent{}, w.err
	}
	c := make(chan struct{})
	w.waiters[id] = append(w.waiters[id], c)
	w.mu.Unlock()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-c:
	case <-timer.C:
		return observedEvent{}, fmt.Errorf("bench: workflow %s did not end within %s", id, timeout)
	case <-ctx.Done():
		return observedEvent{}, ctx.Err()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if o, ok := w.ended[id]; ok {
		return o, nil
	}
	return observedEvent{}, fmt.Errorf("bench: event stream: %w", w.err)
}

// Events returns the events of a workflow seen so far, in stream order.
func (w *eventWatcher) Events(workflowID string) []observedEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]observedEvent(nil), w.byWF[workflowID]...)
}

// Close stops the watcher and waits for its reader.
func (w *eventWatcher) Close() {
	w.cancel()
	_ = w.rdb.Close() // ends the blocking read in flight
	<-w.done
}
