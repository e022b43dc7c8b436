package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/vault"
)

// scaleReads (issue 34): the reads a person runs against a big instance —
// `sett status`, the hoard's first page and `sett watch` catching up
// from the start of the event stream — timed with ScaleReadWorkflows
// workflows parked on approvals (a claim pending approval each, so every
// one is in flight) and ScaleReadArtefacts artefacts stored.
func (r *runner) scaleReads(ctx context.Context) error {
	extra := "approvals: {artefact_types: [" + parkedType + "], timeout: 0s}\n"
	s, err := r.startStack(ctx, stackSpec{name: "scale-reads", agents: noopAgents(1, r.opts.ThroughputMaxConcurrent), extra: extra})
	if err != nil {
		return err
	}
	defer s.Close()
	nwf, nart := r.opts.ScaleReadWorkflows, r.opts.ScaleReadArtefacts
	t := time.Now()
	if err := parkWorkflows(ctx, s, 0, nwf); err != nil {
		return err
	}
	roots, err := s.BB.ListWorkflows(ctx, int64(nwf))
	if err != nil {
		return err
	}
	if err := seedNotes(ctx, s.BB, roots, nart-nwf); err != nil {
		return err
	}
	total, err := s.BB.CountArtefacts(ctx)
	if err != nil {
		return err
	}
	r.progress("scale-reads: %d workflows in flight and %d artefacts seeded in %s", nwf, total, time.Since(t).Round(time.Millisecond))

	var status, hoard, watch []float64
	var events, activeClaims int
	for i := 0; i < r.opts.ScaleReadSamples; i++ {
		t := time.Now()
		n, err := statusReads(ctx, s.BB)
		if err != nil {
			return err
		}
		status, activeClaims = append(status, ms(time.Since(t))), n
		t = time.Now()
		page, err := s.BB.ListArtefacts(ctx, blackboard.PageQuery{Limit: 50})
		if err != nil {
			return err
		}
		if _, err := s.BB.GetArtefacts(ctx, page.IDs); err != nil {
			return err
		}
		hoard = append(hoard, ms(time.Since(t)))
		t = time.Now()
		after := "0"
		events = 0
		for {
			evs, err := s.BB.ReadEvents(ctx, after, 1000, 0)
			if err != nil {
				return err
			}
			if len(evs) == 0 {
				break
			}
			events += len(evs)
			after = evs[len(evs)-1].StreamID
		}
		watch = append(watch, ms(time.Since(t)))
	}
	// The vault: a bridge on a fresh vault; its first pass writes a file
	// per pending approval, the next ones only refresh Dashboard.md.
	dir := filepath.Join(r.workDir, "scale-reads-vault")
	if _, err := vault.Scaffold(dir); err != nil {
		return err
	}
	br := vault.NewBridge(s.BB, vault.Options{Path: dir, RescanInterval: 30 * time.Second}, zerolog.Nop())
	t = time.Now()
	if err := br.Sync(ctx); err != nil {
		return fmt.Errorf("bench: first vault pass: %w", err)
	}
	firstPass := time.Since(t)
	r.progress("scale-reads: first vault pass (a file per pending approval) in %s", firstPass.Round(time.Millisecond))
	var passes []float64
	for i := 0; i < r.opts.ScaleReadSamples; i++ {
		t := time.Now()
		if err := br.Sync(ctx); err != nil {
			return fmt.Errorf("bench: vault pass: %w", err)
		}
		passes = append(passes, ms(time.Since(t)))
	}
	at := fmt.Sprintf("%s workflows in flight, %s artefacts", formatCount(nwf), formatCount(int(total)))
	f := NewFigure("scale_read_status", "status, "+at, "ms", "runs", status, "")
	f.Note = fmt.Sprintf("the blackboard reads of `sett status` (internal/cli collectStatus): leader, pause, scheduler counts, CountWorkflows (newest 10 000), GetWorkflows of every running one examined, tokens, "+
		"ActiveClaims + GetClaims + ClaimOutputs of every active claim (%d), the registered agents; reads every active claim: grows with workflows in flight", activeClaims)
	r.add(f)
	f = NewFigure("scale_read_hoard_first_page", "hoard first page, "+at, "ms", "runs", hoard, "")
	f.Note = "ListArtefacts(limit 50) + GetArtefacts of the page: an index range, does not grow with the artefacts stored"
	r.add(f)
	f = NewFigure("scale_read_watch_catch_up", "watch catch-up from the stream's start, "+at, "ms", "runs", watch, "")
	f.Note = fmt.Sprintf("ReadEvents from \"0\" in pages of 1000 until the end: %d events (the stream is capped by events.max_len): grows with the stream, not with the instance", events)
	r.add(f)
	f = NewFigure("scale_read_vault_pass", "vault pass (Dashboard.md refresh), "+at, "ms", "passes", passes, "")
	f.Note = fmt.Sprintf("vault.Bridge.Sync on a fresh vault after its first pass (%s, which wrote a file per pending approval): "+
		"tasks, approvals, workflows, memories and Dashboard.md, with every parked workflow's approval pending", firstPass.Round(time.Millisecond))
	r.add(f)
	return nil
}

// statusReads makes the blackboard reads `sett status` makes and returns
// the number of active claims it read.
func statusReads(ctx context.Context, bb *blackboard.Client) (int, error) {
	if _, err := bb.Leader(ctx); err != nil {
		return 0, err
	}
	if _, err := bb.GetPauseState(ctx); err != nil {
		return 0, err
	}
	if _, err := bb.CountScheduler(ctx); err != nil {
		return 0, err
	}
	wc, err := bb.CountWorkflows(ctx, 0)
	if err != nil {
		return 0, err
	}
	// The CLI reads every running workflow examined, then ranks them and
	// shows 20.
	if _, err := bb.GetWorkflows(ctx, wc.Running); err != nil {
		return 0, err
	}
	if _, err := bb.AgentTokens(ctx); err != nil {
		return 0, err
	}
	ids, err := bb.ActiveClaims(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := bb.GetClaims(ctx, ids); err != nil {
		return 0, err
	}
	if _, err := bb.ClaimOutputs(ctx, ids); err != nil {
		return 0, err
	}
	if _, err := bb.Agents(ctx); err != nil {
		return 0, err
	}
	return len(ids), nil
}

// seedNotes writes n terminal Note artefacts (1 KiB payloads) spread
// over the workflows roots, with 32 concurrent writers through the real
// script.
func seedNotes(ctx context.Context, bb *blackboard.Client, roots []string, n int) error {
	if n <= 0 || len(roots) == 0 {
		return nil
	}
	const workers = 32
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				wf := roots[i%len(roots)]
				id := blackboard.NewID()
				a := &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: blackboard.StructuralTerminal,
					Type: "Note", Payload: benchPayload, SourceArtefacts: []string{wf}, ProducedByRole: "bench",
					WorkflowID: wf, Summary: "bench artefact", Depth: 1}
				if err := bb.CreateArtefact(ctx, a, blackboard.WriteAuth{}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	return <-errs
}
