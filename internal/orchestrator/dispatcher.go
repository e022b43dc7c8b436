package orchestrator

import (
	"context"
	"hash/fnv"
	"sync"
)

// Dispatcher runs tasks on a fixed set of workers, always sending tasks
// with the same key to the same worker. Different claims advance in
// parallel; the steps of one claim run in order, which avoids pointless
// compare-and-set conflicts (correctness does not depend on it).
//
// Submit blocks when the worker's queue is full: back-pressure for the
// event reader. Safe for concurrent use.
type Dispatcher struct {
	queues []chan func(context.Context)
	wg     sync.WaitGroup
}

// NewDispatcher returns a dispatcher with n workers and a queue of depth
// per worker.
func NewDispatcher(n, depth int) *Dispatcher {
	if n < 1 {
		n = 1
	}
	d := &Dispatcher{queues: make([]chan func(context.Context), n)}
	for i := range d.queues {
		d.queues[i] = make(chan func(context.Context), depth)
	}
	return d
}

// Run starts the workers and returns when ctx ends and every queued task
// has run (tasks see the cancelled ctx and should return quickly).
func (d *Dispatcher) Run(ctx context.Context) error {
	for _, q := range d.queues {
		d.wg.Add(1)
		go func(q chan func(context.Context)) {
			defer d.wg.Done()
			for {
				select {
				case task := <-q:
					task(ctx)
				case <-ctx.Done():
					return
				}
			}
		}(q)
	}
	<-ctx.Done()
	d.wg.Wait()
	return nil
}

// Submit queues task on the worker for key. It returns false when ctx ended
// first.
func (d *Dispatcher) Submit(ctx context.Context, key string, task func(context.Context)) bool {
	select {
	case d.queues[d.queueFor(key)] <- task:
		return true
	case <-ctx.Done():
		return false
	}
}

// queueFor picks the worker of a key.
func (d *Dispatcher) queueFor(key string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(len(d.queues)))
}
