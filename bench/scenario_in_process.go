package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/cub"
)

// benchPayload is the payload of the artefacts the in-process scenarios
// write: 1 KiB, a plan-sized text.
var benchPayload = strings.Repeat("Sett bench payload line: a plan, a diff, a review. ", 21)[:1024]

// inProcess runs the scenarios that call the blackboard and the cub's
// ContextBuilder from the harness process, on a redis-server of their own
// (no persistence: they only read what they seeded).
func (r *runner) inProcess(ctx context.Context) error {
	srv, err := startRedisServer(ctx, filepath.Join(r.workDir, "in-process-redis"), false)
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	ro, err := redis.ParseURL(srv.URL())
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	ro.PoolSize = 64
	rdb := redis.NewClient(ro)
	defer rdb.Close()
	counter := &clientCounter{}
	rdb.AddHook(counter)
	if err := r.contextChains(ctx, rdb, counter); err != nil {
		return err
	}
	return r.hoard(ctx, rdb, counter)
}

// contextChains times cub.ContextBuilder.Build on a chain of 10 artefacts,
// each the source of the next, and on a feedback claim whose target ends
// such a chain and carries three reviews.
func (r *runner) contextChains(ctx context.Context, rdb *redis.Client, counter *clientCounter) error {
	bb, err := blackboard.New(ctx, rdb, blackboard.Options{Instance: "bench-context"})
	if err != nil {
		return err
	}
	create := func(a *blackboard.Artefact) error { return bb.CreateArtefact(ctx, a, blackboard.WriteAuth{}) }
	artefact := func(wf string, st blackboard.StructuralType, typ string, depth int, sources ...string) *blackboard.Artefact {
		id := blackboard.NewID()
		return &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: st, Type: typ, Payload: benchPayload,
			SourceArtefacts: sources, ProducedByRole: "bench", ProducedByAgent: "bench", WorkflowID: wf,
			Summary: "bench artefact", Depth: depth}
	}
	// The chain, read from the target: S9 (level 1) → S8 → … → S1 → the
	// goal (level 10).
	goal := blackboard.NewGoal(benchPayload, 0, "user", nil)
	if err := create(goal); err != nil {
		return err
	}
	prev := goal.ID
	for depth := 1; depth < 10; depth++ {
		a := artefact(goal.ID, blackboard.StructuralStandard, "Step", depth, prev)
		if err := create(a); err != nil {
			return err
		}
		prev = a.ID
	}
	target := artefact(goal.ID, blackboard.StructuralStandard, "Draft", 10, prev)
	if err := create(target); err != nil {
		return err
	}
	var reviews []string
	for i := 0; i < 3; i++ {
		rv := artefact(goal.ID, blackboard.StructuralReview, "Review", 11, target.ID)
		rv.Payload = `{"verdict":"reject","severity":"Major","findings":["` + strings.Repeat("needs work ", 20) + `"]}`
		if err := create(rv); err != nil {
			return err
		}
		reviews = append(reviews, rv.ID)
	}
	builder := cub.NewContextBuilder(bb, 10)
	for _, c := range []struct {
		name, title string
		claim       *blackboard.Claim
		want        int
		target      string
		checks      []Check
	}{
		{"context_chain_depth_10", "context chain, depth 10", &blackboard.Claim{}, 10, "≤ 2 ms", []Check{{Stat: StatP50, Value: 2}}},
		{"context_chain_feedback_3_reviews", "context chain, feedback claim: depth 10 + 3 reviews", &blackboard.Claim{AdditionalContextIDs: reviews}, 13, "", nil},
	} {
		var samples []float64
		rt0 := counter.roundTrips.Load()
		warm := max(20, r.opts.ContextSamples/50)
		for i := 0; i < warm+r.opts.ContextSamples; i++ {
			if i == warm {
				rt0 = counter.roundTrips.Load()
			}
			t := time.Now()
			chain, err := builder.Build(ctx, target, c.claim)
			d := time.Since(t)
			if err != nil {
				return err
			}
			if len(chain.Artefacts) != c.want || chain.Truncated {
				return fmt.Errorf("bench: %s: chain of %d artefacts (truncated %t), want %d", c.name, len(chain.Artefacts), chain.Truncated, c.want)
			}
			if i >= warm {
				samples = append(samples, ms(d))
			}
		}
		perBuild := float64(counter.roundTrips.Load()-rt0) / float64(r.opts.ContextSamples)
		f := NewFigure(c.name, c.title, "ms", "builds", samples, c.target, c.checks...)
		f.Note = fmt.Sprintf("in-process cub.ContextBuilder.Build (10 levels, %d artefacts of 1 KiB, %.1f pipelined round trips per build) against a local redis-server", c.want, perBuild)
		if c.target == "" {
			f.Note += "; no separate target (informational)"
		}
		r.add(f)
	}
	return nil
}

// hoard seeds opts.HoardArtefacts artefacts (1 KiB payloads, in workflows
// of 100) with concurrent CreateArtefact calls — the real script — and
// times the first page of `sett hoard` (ListArtefacts limit 50 plus
// GetArtefacts of the page, what ScanArtefacts does without a filter) and
// an 8-character short-id resolution.
func (r *runner) hoard(ctx context.Context, rdb *redis.Client, counter *clientCounter) error {
	bb, err := blackboard.New(ctx, rdb, blackboard.Options{Instance: "bench-hoard"})
	if err != nil {
		return err
	}
	total := r.opts.HoardArtefacts
	ids := make([]string, total)
	start := time.Now()
	const workers = 32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	perWorkflow := 100
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var wf string
			// Worker w writes artefacts w, w+workers, …; the first of each
			// run of perWorkflow (in its own sequence) is a goal.
			for n, i := 0, w; i < total; n, i = n+1, i+workers {
				var a *blackboard.Artefact
				if n%perWorkflow == 0 {
					a = blackboard.NewGoal(benchPayload, 0, "user", nil)
					wf = a.ID
				} else {
					id := blackboard.NewID()
					a = &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: blackboard.StructuralTerminal,
						Type: "Note", Payload: benchPayload, SourceArtefacts: []string{wf}, ProducedByRole: "bench",
						WorkflowID: wf, Summary: "bench artefact", Depth: 1}
				}
				if err := bb.CreateArtefact(ctx, a, blackboard.WriteAuth{}); err != nil {
					errs <- err
					return
				}
				ids[i] = a.ID
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	n, err := bb.CountArtefacts(ctx)
	if err != nil {
		return err
	}
	if n != int64(total) {
		return fmt.Errorf("bench: seeded %d artefacts, the index holds %d", total, n)
	}
	r.progress("seeded %d artefacts in %s", total, time.Since(start).Round(time.Millisecond))

	var pages, resolves []float64
	ambiguous := 0
	rng := rand.New(rand.NewPCG(1, 2))
	warm := max(10, r.opts.HoardSamples/50)
	for i := 0; i < warm+r.opts.HoardSamples; i++ {
		t := time.Now()
		page, err := bb.ListArtefacts(ctx, blackboard.PageQuery{Limit: 50})
		if err != nil {
			return err
		}
		arts, err := bb.GetArtefacts(ctx, page.IDs)
		d := time.Since(t)
		if err != nil {
			return err
		}
		if len(arts) != min(50, total) || arts[0] == nil {
			return fmt.Errorf("bench: first page holds %d artefacts, want %d", len(arts), min(50, total))
		}
		id := ids[rng.IntN(total)]
		t = time.Now()
		got, err := bb.ResolveID(ctx, blackboard.PrefixArtefact, id[:8])
		dr := time.Since(t)
		var amb *blackboard.AmbiguousError
		switch {
		case errors.As(err, &amb):
			ambiguous++ // 32 bits of prefix over 100 000 ids: about one pair collides
		case err != nil:
			return err
		case got != id:
			return fmt.Errorf("bench: %s resolved to %s, want %s", id[:8], got, id)
		}
		if i >= warm {
			pages = append(pages, ms(d))
			resolves = append(resolves, ms(dr))
		}
	}
	f := NewFigure("hoard_first_page_100k", fmt.Sprintf("hoard first page, %d artefacts", total), "ms", "pages", pages,
		"≤ 50 ms", Check{Stat: StatP50, Value: 50})
	f.Note = "in-process ListArtefacts(limit 50) + GetArtefacts of the 50 ids (2 round trips, 1 KiB payloads); judged on the median"
	r.add(f)
	f = NewFigure("resolve_short_id_100k", fmt.Sprintf("short-id resolve (8 chars), %d artefacts", total), "ms", "resolutions", resolves,
		"≤ 5 ms", Check{Stat: StatP50, Value: 5})
	f.Note = fmt.Sprintf("in-process ResolveID(artefact, 8-char prefix of a random seeded id): one ZRANGEBYLEX; %d of the prefixes were ambiguous (answered with the candidates, timed all the same); judged on the median", ambiguous)
	r.add(f)
	return nil
}
