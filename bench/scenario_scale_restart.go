package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/daemonproc"
)

// scaleRestart (issue 34): the orchestrator is killed with SIGKILL while
// ScaleRestartClaims claims wait in the scheduler for a
// max_concurrent_claims slot, and started again. The backlog is built
// while the instance is paused (the cheap way to have every claim
// waiting at once: bid on, not granted); the orchestrator is killed,
// the instance resumed while none runs (the resume waits in the
// orchestrator's queue, as the capacity_freed events of a crash do), and
// the orchestrator started. Timed: process start → the first
// claim_granted, and the drain (claims/s from the first grant to the
// last workflow's end).
func (r *runner) scaleRestart(ctx context.Context) error {
	n, slots := r.opts.ScaleRestartClaims, r.opts.ThroughputMaxConcurrent
	s, err := r.startStack(ctx, stackSpec{name: "scale-restart", agents: noopAgents(1, slots),
		orchestrator: fmt.Sprintf(", max_concurrent_claims: %d", slots)})
	if err != nil {
		return err
	}
	defer s.Close()
	for i := 0; i < r.opts.HopWarmup; i++ {
		if _, _, _, err := s.RunGoal(ctx, "warm-up"); err != nil {
			return err
		}
	}
	if _, err := s.BB.Pause(ctx, "bench", "build the backlog", blackboard.ControlFromCLI); err != nil {
		return err
	}
	t := time.Now()
	ids, err := postGoals(ctx, s, n)
	if err != nil {
		return err
	}
	if err := waitSchedulerWaiting(ctx, s, int64(n)); err != nil {
		return err
	}
	r.progress("scale-restart: %d claims waiting for a slot in %s", n, time.Since(t).Round(time.Millisecond))

	old := s.Orchestrator
	_ = old.Signal(syscall.SIGKILL)
	<-old.Exited()
	if _, err := s.BB.Resume(ctx, "bench", blackboard.ControlFromCLI); err != nil {
		return err
	}
	started := time.Now()
	if s.Orchestrator, err = daemonproc.Start(old.Spec()); err != nil {
		return err
	}
	deadline := started.Add(3 * time.Minute)
	var first, last time.Time
	for _, id := range ids {
		end, err := s.Watcher.WaitWorkflow(ctx, id, max(time.Until(deadline), time.Millisecond))
		if err != nil {
			return fmt.Errorf("%w (stack %s, logs in %s)", err, s.Name, s.Dir)
		}
		if st := end.Field("status"); st != string(blackboard.WorkflowCompleted) {
			return fmt.Errorf("bench: workflow %s ended %s: %s (logs in %s)", id, st, end.Field("reason"), s.Dir)
		}
		if end.At.After(last) {
			last = end.At
		}
		for _, e := range s.Watcher.Events(id) {
			if e.Type == blackboard.EventClaimGranted && (first.IsZero() || e.At.Before(first)) {
				first = e.At
			}
		}
	}
	if first.IsZero() {
		return fmt.Errorf("bench: no claim_granted after the restart (logs in %s)", s.Dir)
	}
	how := fmt.Sprintf("%d claims bid on and waiting for one of %d max_concurrent_claims slots (built while paused; one no-op agent, max_concurrent %d); "+
		"SIGKILL to the orchestrator, resume written while none runs, the orchestrator started again", n, slots, slots)
	f := NewFigure("scale_restart_first_grant", fmt.Sprintf("restart with %s claims waiting: start → first grant", formatCount(n)), "ms", "restart",
		[]float64{ms(first.Sub(started))}, "≤ 1000 ms", Check{Stat: StatP50, Value: 1000})
	f.Note = how + "; from the process start (exec) to the first claim_granted arriving"
	r.add(f)
	drain := last.Sub(first)
	d := NewFigure("scale_restart_drain", fmt.Sprintf("restart with %s claims waiting: drain", formatCount(n)), "claims/s", "restart",
		[]float64{float64(n) / max(drain.Seconds(), 1e-3)}, "")
	d.Note = how + fmt.Sprintf("; from the first grant to the last workflow's end (%s)", drain.Round(time.Millisecond))
	r.add(d)
	return nil
}

// postGoals writes n goals (16 writers) and returns their ids.
func postGoals(ctx context.Context, s *stack, n int) ([]string, error) {
	const writers = 16
	ids := make([]string, n)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += writers {
				g := blackboard.NewGoal("backlog "+strconv.Itoa(i), 0, "user", nil)
				if err := s.BB.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
					errs <- err
					return
				}
				ids[i] = g.ID
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return ids, nil
}

// waitSchedulerWaiting polls the scheduler's count of waiting claims
// until it reaches n, with a deadline.
func waitSchedulerWaiting(ctx context.Context, s *stack, n int64) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := s.BB.CountScheduler(ctx)
		if err != nil {
			return err
		}
		if c.Waiting >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d of %d claims waiting in the scheduler after 2m (stack %s, logs in %s)", c.Waiting, n, s.Name, s.Dir)
		}
		if err := wait(ctx, 50*time.Millisecond); err != nil { // polling a count, with a deadline
			return err
		}
	}
}
