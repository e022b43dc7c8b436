package bench

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/daemonproc"
)

// recovery times how long work stalls when the orchestrator crashes and
// is restarted (the scheduling rules; the "a restarted orchestrator
// with no rival takes over at once"): SIGKILL to the orchestrator, a goal
// posted while none runs, the same orchestrator started again, and the
// time from the kill to the goal's claim being granted. The restart
// reclaims its own lease at once rather than waiting out the 10 s TTL.
func (r *runner) recovery(ctx context.Context) error {
	s, err := r.startStack(ctx, stackSpec{name: "recovery", agents: noopAgents(1, 0)})
	if err != nil {
		return err
	}
	defer s.Close()
	// Run the orchestrator as `sett up` does, without --id: its identity
	// is then the default one (host and lock slot, internal/daemon/orchestratord).
	s.Orchestrator.Stop(5 * time.Second)
	spec := s.Orchestrator.Spec()
	spec.Argv = spec.Argv[:1]
	if s.Orchestrator, err = daemonproc.Start(spec); err != nil {
		return err
	}
	if err := s.Orchestrator.WaitReady(ctx, 30*time.Second); err != nil {
		return err
	}
	if _, _, _, err := s.RunGoal(ctx, "warm-up before the first crash"); err != nil {
		return err
	}
	var values []float64
	for i := 0; i < r.opts.RecoverySamples; i++ {
		old := s.Orchestrator
		_ = old.Signal(syscall.SIGKILL)
		killed := time.Now()
		<-old.Exited()
		id, _, err := s.PostGoal(ctx, fmt.Sprintf("after crash %d", i))
		if err != nil {
			return err
		}
		if s.Orchestrator, err = daemonproc.Start(old.Spec()); err != nil {
			return err
		}
		if _, err := s.WaitCompleted(ctx, id); err != nil {
			return err
		}
		granted := time.Time{}
		for _, e := range s.Watcher.Events(id) {
			if e.Type == blackboard.EventClaimGranted {
				granted = e.At
				break
			}
		}
		if granted.IsZero() {
			return fmt.Errorf("bench: workflow %s completed without a claim_granted event (logs in %s)", id, s.Dir)
		}
		values = append(values, ms(granted.Sub(killed)))
	}
	f := NewFigure("orchestrator_recovery", "recovery: orchestrator kill -9 → next grant", "ms", "restarts", values,
		"p50 ≤ 1000 ms", Check{Stat: StatP50, Value: 1000})
	f.Note = "SIGKILL to the orchestrator (started as `sett up` starts it, without --id), a goal posted while it is down, the orchestrator started again at once; " +
		"from the kill to the goal's claim_granted arriving. Includes the process start; the leader TTL is 10 s, so a restart that waited for its old lease would show ≥ 10000 ms"
	r.add(f)
	return nil
}
