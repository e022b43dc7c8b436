package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/metrics"
	"github.com/settdev/sett/internal/orchestrator"
	"github.com/settdev/sett/internal/vault"
)

// vaultLatency times the vault bridge with an orchestrator in
// this process, on a redis-server of its own: a task file renamed into
// Needs_Action/ → its GoalDefined on the event stream, and a decision
// (the approval file moved to Approved/) → the claim leaving
// pending_approval (approval_applied). Goals themselves are gated, so no
// agent is needed: the measured path is file events, the bridge's pass,
// the blackboard script and the orchestrator's handling. These run with
// vault.settle 0 (a file is read at once); a second pass with the settle
// period people run with (vault.settle, default 2s) times a settled file
// → its goal, the settle period shown apart.
func (r *runner) vaultLatency(ctx context.Context) error {
	srv, err := startRedisServer(ctx, filepath.Join(r.workDir, "vault-redis"), true)
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	if err := r.vaultDropAndDecide(ctx, srv.URL()); err != nil {
		return err
	}
	return r.vaultSettled(ctx, srv.URL())
}

// vaultStack is a vault bridge in an orchestrator of this process.
type vaultStack struct {
	bb    *blackboard.Client
	dir   string
	stage string
	stop  func()
}

// startVault starts an orchestrator leading instance with a vault in
// workDir/name whose bridge reads files after settle; goals are gated.
func (r *runner) startVault(ctx context.Context, url, name string, settle time.Duration) (*vaultStack, error) {
	bb, err := blackboard.Dial(ctx, url, blackboard.Options{Instance: "bench-" + name})
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(r.workDir, name)
	if _, err := vault.Scaffold(dir); err != nil {
		bb.Close()
		return nil, err
	}
	stage := filepath.Join(r.workDir, name+"-stage")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		bb.Close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	br := vault.NewBridge(bb, vault.Options{Path: dir, RescanInterval: 30 * time.Second, Settle: settle}, zerolog.Nop())
	cfg := orchestrator.Config{
		Claims:                 orchestrator.ClaimConfig{Approvals: config.ApprovalsConfig{ArtefactTypes: []string{blackboard.GoalType}, OnReject: config.OnRejectEnd}},
		LeaderServices:         []orchestrator.LeaderService{{Name: "vault_bridge", Run: br.Run}},
		VaultManagesToolMemory: true,
		LeaderTTL:              2 * time.Second,
	}
	o := orchestrator.New(bb, cfg, orchestrator.NewMetrics(metrics.NewRegistry()), zerolog.Nop(), "bench-"+name)
	octx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- o.Run(octx) }()
	vs := &vaultStack{bb: bb, dir: dir, stage: stage, stop: func() { cancel(); <-done; bb.Close() }}
	if err := pollUntil(ctx, 30*time.Second, "the orchestrator leads", func() (bool, error) { return o.Leading(), nil }); err != nil {
		vs.stop()
		return nil, err
	}
	return vs, nil
}

// drop writes a task file in the stage folder and renames it into
// Needs_Action/ (a finished file arriving at once); it returns when the
// rename was done.
func (vs *vaultStack) drop(name string) (time.Time, error) {
	if err := os.WriteFile(filepath.Join(vs.stage, name), []byte("---\npriority: medium\n---\nBench task.\n"), 0o644); err != nil {
		return time.Time{}, fmt.Errorf("bench: %w", err)
	}
	start := time.Now()
	if err := os.Rename(filepath.Join(vs.stage, name), filepath.Join(vs.dir, vault.NeedsAction, name)); err != nil {
		return time.Time{}, fmt.Errorf("bench: %w", err)
	}
	return start, nil
}

// isGoal matches a goal's artefact_created event.
func isGoal(e blackboard.Event) bool {
	return e.Type == blackboard.EventArtefactCreated && e.ArtefactID != "" && e.ArtefactID == e.WorkflowID
}

// vaultSettled times a task file with the settle period people run
// with: from the moment it has been unchanged for vault.settle (its
// rename + the period) to its GoalDefined on the stream. The file is
// written once, so the bridge's settle timer is all that holds it.
func (r *runner) vaultSettled(ctx context.Context, url string) error {
	settle := r.opts.VaultSettle
	vs, err := r.startVault(ctx, url, "vault-settle", settle)
	if err != nil {
		return err
	}
	defer vs.stop()
	var toGoal []float64
	for i := 0; i < 1+r.opts.VaultSettleSamples; i++ {
		after, err := vs.bb.LastEventID(ctx)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("settle-%04d.md", i)
		start, err := vs.drop(name)
		if err != nil {
			return err
		}
		if _, _, err := waitStreamEvent(ctx, vs.bb, after, isGoal); err != nil {
			return fmt.Errorf("bench: settled task file %s → goal: %w", name, err)
		}
		goalAt := time.Now()
		if i == 0 {
			continue // warm-up
		}
		toGoal = append(toGoal, ms(goalAt.Sub(start.Add(settle))))
	}
	f := NewFigure("vault_settled_to_goal", fmt.Sprintf("Vault: task file settled (vault.settle %s) → GoalDefined", settle), "ms", "files", toGoal,
		"p50 ≤ 100 ms", Check{Stat: StatP50, Value: 100})
	f.Note = fmt.Sprintf("rename into Needs_Action/ + the settle period (%s, not included: a file is read only once unchanged that long) → the goal's artefact_created read from the stream; what a person waits beyond the period they chose", settle)
	r.add(f)
	return nil
}

// vaultDropAndDecide times a task file read at once (vault.settle 0) →
// its goal, and its approval file moved to Approved/ → applied.
func (r *runner) vaultDropAndDecide(ctx context.Context, url string) error {
	vs, err := r.startVault(ctx, url, "vault", 0)
	if err != nil {
		return err
	}
	defer vs.stop()
	bb, dir := vs.bb, vs.dir
	var toGoal, toApplied []float64
	for i := 0; i < r.opts.HopWarmup+r.opts.VaultSamples; i++ {
		after, err := bb.LastEventID(ctx)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("bench-%04d.md", i)
		start, err := vs.drop(name)
		if err != nil {
			return err
		}
		ev, after, err := waitStreamEvent(ctx, bb, after, isGoal)
		if err != nil {
			return fmt.Errorf("bench: task file %s → goal: %w", name, err)
		}
		goalAt := time.Now()
		wf := ev.WorkflowID
		var pending string
		if err := pollUntil(ctx, 30*time.Second, "the approval file", func() (bool, error) {
			m, _ := filepath.Glob(filepath.Join(dir, vault.PendingApproval, "*.md"))
			for _, p := range m {
				if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), wf) {
					pending = p
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			return err
		}
		decided := time.Now()
		if err := os.Rename(pending, filepath.Join(dir, vault.Approved, filepath.Base(pending))); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if _, _, err := waitStreamEvent(ctx, bb, after, func(e blackboard.Event) bool {
			return e.Type == blackboard.EventApprovalApplied && e.WorkflowID == wf
		}); err != nil {
			return fmt.Errorf("bench: decision → applied: %w", err)
		}
		applied := time.Now()
		if i < r.opts.HopWarmup {
			continue
		}
		toGoal = append(toGoal, ms(goalAt.Sub(start)))
		toApplied = append(toApplied, ms(applied.Sub(decided)))
	}
	f := NewFigure("vault_file_to_goal", "Vault: task file dropped → GoalDefined (vault.settle 0)", "ms", "files", toGoal,
		"p50 ≤ 100 ms", Check{Stat: StatP50, Value: 100})
	f.Note = "rename into Needs_Action/ → the goal's artefact_created read from the stream (fsnotify, one bridge pass, create_artefact), with vault.settle 0 (read at once; vault_settled_to_goal has the default period); orchestrator and bridge in the harness process"
	r.add(f)
	f = NewFigure("vault_decision_to_applied", "Vault: file moved to Approved/ → claim leaves pending_approval", "ms", "decisions", toApplied, "")
	f.Note = "rename into Approved/ → approval_applied read from the stream (fsnotify, bridge pass, decide_approval, the orchestrator's transition); informational"
	r.add(f)
	return nil
}

// waitStreamEvent blocks on the event stream after the id after until an
// event matches; it returns the event and the id to read on from.
func waitStreamEvent(ctx context.Context, bb *blackboard.Client, after string, match func(blackboard.Event) bool) (blackboard.Event, string, error) {
	deadline := time.Now().Add(30 * time.Second)
	if after == "" {
		after = "0-0"
	}
	for time.Now().Before(deadline) {
		evs, err := bb.ReadEvents(ctx, after, 256, time.Second)
		if err != nil {
			return blackboard.Event{}, after, err
		}
		for _, e := range evs {
			if match(e) {
				return e, after, nil
			}
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].StreamID
		}
	}
	return blackboard.Event{}, after, errors.New("no matching event within 30s")
}

// pollUntil checks cond every millisecond until it holds (for file
// appearances, which have no event to block on).
func pollUntil(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %s: not within %s", what, timeout)
		}
		if err := wait(ctx, time.Millisecond); err != nil {
			return err
		}
	}
}
