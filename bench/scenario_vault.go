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

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/metrics"
	"github.com/settdev/sett/internal/orchestrator"
	"github.com/settdev/sett/internal/vault"
	"github.com/settdev/sett/pkg/blackboard"
)

// vaultLatency times the vault bridge with an orchestrator in
// this process, on a redis-server of its own: a task file renamed into
// Needs_Action/ → its GoalDefined on the event stream, and a decision
// (the approval file moved to Approved/) → the claim leaving
// pending_approval (approval_applied). Goals themselves are gated, so no
// agent is needed: the measured path is file events, the bridge's pass,
// the blackboard script and the orchestrator's handling.
func (r *runner) vaultLatency(ctx context.Context) error {
	srv, err := startRedisServer(ctx, filepath.Join(r.workDir, "vault-redis"), true)
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	bb, err := blackboard.Dial(ctx, srv.URL(), blackboard.Options{Instance: "bench-vault"})
	if err != nil {
		return err
	}
	defer bb.Close()
	dir := filepath.Join(r.workDir, "vault")
	if _, err := vault.Scaffold(dir); err != nil {
		return err
	}
	stage := filepath.Join(r.workDir, "vault-stage")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	br := vault.NewBridge(bb, vault.Options{Path: dir, RescanInterval: 30 * time.Second}, zerolog.Nop())
	set := orchestrator.Settings{
		Approvals:              config.ApprovalsConfig{ArtefactTypes: []string{blackboard.GoalType}, OnReject: config.OnRejectEnd},
		LeaderServices:         []orchestrator.LeaderService{{Name: "vault_bridge", Run: br.Run}},
		VaultManagesToolMemory: true,
		LeaderTTL:              2 * time.Second,
	}
	o := orchestrator.New(bb, set, orchestrator.NewMetrics(metrics.NewRegistry()), zerolog.Nop(), "bench-vault")
	octx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- o.Run(octx) }()
	defer func() { cancel(); <-done }()
	if err := pollUntil(ctx, 30*time.Second, "the orchestrator leads", func() (bool, error) { return o.Leading(), nil }); err != nil {
		return err
	}

	var toGoal, toApplied []float64
	for i := 0; i < r.opts.HopWarmup+r.opts.VaultSamples; i++ {
		after, err := bb.LastEventID(ctx)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("bench-%04d.md", i)
		if err := os.WriteFile(filepath.Join(stage, name), []byte("---\npriority: medium\n---\nBench task.\n"), 0o644); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		start := time.Now()
		if err := os.Rename(filepath.Join(stage, name), filepath.Join(dir, vault.NeedsAction, name)); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		ev, after, err := waitStreamEvent(ctx, bb, after, func(e blackboard.Event) bool {
			return e.Type == blackboard.EventArtefactCreated && e.ArtefactID != "" && e.ArtefactID == e.WorkflowID
		})
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
	f := NewFigure("vault_file_to_goal", "Vault: task file dropped → GoalDefined", "ms", "files", toGoal,
		"p50 ≤ 100 ms", Check{Stat: StatP50, Value: 100})
	f.Note = "rename into Needs_Action/ → the goal's artefact_created read from the stream (fsnotify, one bridge pass, create_artefact); orchestrator and bridge in the harness process"
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
