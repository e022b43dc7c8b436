package bench

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Retention under a compressed clock: the same finished
// workflows with retention off (everything kept) and on (workflows kept
// 1ms after they end, events bounded to retentionEventsMaxLen entries or 5s,
// the janitor every 100ms), so a 30-minute soak becomes a run of seconds.
const (
	retentionEventsMaxLen = 5000
	retentionOff          = "retention: {workflows: 0, events_max_len: 0, events_max_age: 0, consumer_idle: 0}\n"
)

var retentionOn = fmt.Sprintf("retention: {workflows: 1ms, events_max_len: %d, events_max_age: 5s, consumer_idle: 1m, interval: 100ms, batch: 1000}\n",
	retentionEventsMaxLen)

// retention measures Redis memory per finished workflow with retention off
// and on, and the events stream's length while the janitor runs.
func (r *runner) retention(ctx context.Context) error {
	off, _, err := r.retentionRun(ctx, "retention-off", retentionOff)
	if err != nil {
		return err
	}
	on, lengths, err := r.retentionRun(ctx, "retention-on", retentionOn)
	if err != nil {
		return err
	}
	n := r.opts.RetentionWorkflows
	f := NewFigure("retention_memory_off", fmt.Sprintf("Redis memory per finished workflow, retention off (%d)", n),
		"bytes", "run", []float64{off}, "informational")
	f.Note = "INFO memory used_memory less script cache, client and AOF buffers, after every workflow ended, minus before the first goal, ÷ workflows; one agent, one claim per goal"
	r.add(f)
	f = NewFigure("retention_memory_on", fmt.Sprintf("Redis memory per finished workflow, retention on (%d)", n),
		"bytes", "run", []float64{on}, "informational")
	f.Note = "same, once the janitor (workflows: 1ms, interval 100ms) deleted every finished workflow; what is left is the trimmed events stream and allocator slack"
	r.add(f)
	f = NewFigure("retention_events_length", fmt.Sprintf("events stream length, retention on (events_max_len %d)", retentionEventsMaxLen),
		"entries", "readings", lengths, fmt.Sprintf("≤ %d", 3*retentionEventsMaxLen),
		Check{Stat: StatMax, Value: 3 * retentionEventsMaxLen})
	f.Note = "XLEN every 100ms while the goals run (compressed clock: events_max_age 5s); XTRIM ~ frees whole nodes, so the bound is approximate"
	r.add(f)
	return nil
}

// retentionRun posts RetentionWorkflows goals in rounds of
// ThroughputGoals, waits for each round to complete, and returns used
// memory per finished workflow (after the janitor emptied the workflows
// index, when it runs) and the events stream lengths read meanwhile.
func (r *runner) retentionRun(ctx context.Context, name, extra string) (float64, []float64, error) {
	s, err := r.startStack(ctx, stackSpec{name: name, agents: noopAgents(1, r.opts.ThroughputMaxConcurrent), extra: extra})
	if err != nil {
		return 0, nil, err
	}
	defer s.Close()
	// Warm-up: one goal, whatever its outcome, so that the figures do
	// not depend on how a fresh stack handles its first goal.
	if id, _, err := s.PostGoal(ctx, name+" warm-up"); err != nil {
		return 0, nil, err
	} else if _, err := s.Watcher.WaitWorkflow(ctx, id, 60*time.Second); err != nil {
		return 0, nil, err
	}
	base, err := s.BB.MemoryUsed(ctx)
	if err != nil {
		return 0, nil, err
	}
	var lengths []float64
	sample := func() error {
		n, err := s.BB.EventsLength(ctx)
		lengths = append(lengths, float64(n))
		return err
	}
	stop := make(chan struct{})
	sampled := make(chan error, 1)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				sampled <- sample()
				return
			case <-t.C:
				if err := sample(); err != nil {
					sampled <- err
					return
				}
			}
		}
	}()
	total := r.opts.RetentionWorkflows
	for done := 0; done < total; {
		n := min(r.opts.ThroughputGoals, total-done)
		if err := r.finishWorkflows(ctx, s, n); err != nil {
			close(stop)
			<-sampled
			return 0, nil, err
		}
		done += n
	}
	if extra == retentionOn {
		// Wait (polling, bounded) until the janitor deleted every
		// finished workflow.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			ids, err := s.BB.ListWorkflows(ctx, 1)
			if err != nil {
				close(stop)
				<-sampled
				return 0, nil, err
			}
			if len(ids) == 0 {
				break
			}
			if time.Now().After(deadline) {
				close(stop)
				<-sampled
				return 0, nil, fmt.Errorf("bench: the janitor left workflows after 2 minutes (stack %s, logs in %s)", name, s.Dir)
			}
			if err := wait(ctx, 100*time.Millisecond); err != nil {
				return 0, nil, err
			}
		}
	}
	close(stop)
	if err := <-sampled; err != nil {
		return 0, nil, err
	}
	used, err := s.BB.MemoryUsed(ctx)
	if err != nil {
		return 0, nil, err
	}
	per := float64(used-base) / float64(total)
	r.progress("%s: %d workflows, used_memory %d → %d bytes: %.0f bytes per finished workflow; events stream %.0f entries at the end",
		name, total, base, used, per, lengths[len(lengths)-1])
	return per, lengths, nil
}

// finishWorkflows posts n goals from 16 goroutines and waits until each
// workflow ended, whatever its outcome: memory is measured per finished
// workflow, failed ones included.
func (r *runner) finishWorkflows(ctx context.Context, s *stack, n int) error {
	ids := make([]string, n)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				id, _, err := s.PostGoal(ctx, fmt.Sprintf("retention goal %d", i))
				if err != nil {
					errs <- err
					return
				}
				ids[i] = id
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	failed := 0
	for _, id := range ids {
		end, err := s.Watcher.WaitWorkflow(ctx, id, 60*time.Second)
		if err != nil {
			return err
		}
		if end.Field("status") != "completed" {
			failed++
		}
	}
	if failed > 0 {
		r.progress("%s: %d of %d workflows did not complete (they count as finished all the same)", s.Name, failed, n)
	}
	return nil
}
