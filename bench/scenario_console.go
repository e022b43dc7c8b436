package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/console"
	"github.com/settdev/sett/pkg/blackboard"
)

// consoleToken is the access token of the bench's consoles.
const consoleToken = "bench-console-token-0123456789"

// consoleStep measures the web console (`sett ui`): the server time of a
// workflow page of 500 artefacts and of the list's first page over
// opts.ConsoleWorkflows workflows, both on a redis-server of their own,
// and the 1-agent hop with opts.ConsoleClients browsers on the live list
// against none.
func (r *runner) consoleStep(ctx context.Context) error {
	if err := r.consolePages(ctx); err != nil {
		return err
	}
	return r.consoleHop(ctx)
}

// newConsole serves a console on bb in-process.
func newConsole(bb *blackboard.Client) (*console.Console, error) {
	return console.New(console.Options{Client: bb, Token: consoleToken, Actor: "bench"})
}

// serveTimed times one GET of path on h (server time: routing, Redis
// reads, layout, template) and checks it answered 200 with want in it.
func serveTimed(h http.Handler, path, want string) (time.Duration, error) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+consoleToken)
	rec := httptest.NewRecorder()
	t := time.Now()
	h.ServeHTTP(rec, req)
	d := time.Since(t)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
		return d, fmt.Errorf("bench: console %s answered %d without %q", path, rec.Code, want)
	}
	return d, nil
}

func (r *runner) consolePages(ctx context.Context) error {
	srv, err := startRedisServer(ctx, filepath.Join(r.workDir, "console-redis"), false)
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
	bb, err := blackboard.New(ctx, rdb, blackboard.Options{Instance: "bench-console"})
	if err != nil {
		return err
	}
	wf, err := seedBigWorkflow(ctx, bb, 500)
	if err != nil {
		return err
	}
	h, err := newConsole(bb)
	if err != nil {
		return err
	}
	warm := max(5, r.opts.ConsoleSamples/20)
	var pages []float64
	for i := 0; i < warm+r.opts.ConsoleSamples; i++ {
		d, err := serveTimed(h, "/w/"+wf, "Plan v3")
		if err != nil {
			return err
		}
		if i >= warm {
			pages = append(pages, ms(d))
		}
	}
	f := NewFigure("console_workflow_page_500", "console workflow page, 500 artefacts", "ms", "pages", pages,
		"p50 ≤ 100 ms", Check{Stat: StatP50, Value: 100})
	f.Note = "server time of GET /w/ID (in-process handler, local redis-server): artefacts, claims, bids, learnings, events read, the graph laid out and rendered as SVG; 125 threads of plan v1 → v2 → v3 with a review of each version"

	r.add(f)
	start := time.Now()
	if err := seedWorkflows(ctx, bb, r.opts.ConsoleWorkflows); err != nil {
		return err
	}
	r.progress("seeded %d workflows in %s", r.opts.ConsoleWorkflows, time.Since(start).Round(time.Millisecond))
	var lists, filtered []float64
	for i := 0; i < warm+r.opts.ConsoleSamples; i++ {
		d, err := serveTimed(h, "/", `id="next"`)
		if err != nil {
			return err
		}
		// A filter that matches one workflow in 100: pages come from a
		// bounded scan (5000 entries at most per request).
		df, err := serveTimed(h, "/?type=Rare", "<table")
		if err != nil {
			return err
		}
		if i >= warm {
			lists, filtered = append(lists, ms(d)), append(filtered, ms(df))
		}
	}
	f = NewFigure("console_list_page_100k", fmt.Sprintf("console list page, %d workflows", r.opts.ConsoleWorkflows), "ms", "pages", lists,
		"p50 ≤ 50 ms", Check{Stat: StatP50, Value: 50})
	f.Note = "server time of GET / (first page of 50, newest first, from the workflow index): cost independent of the total"
	r.add(f)
	f = NewFigure("console_list_filtered_100k", fmt.Sprintf("console list page filtered by type (1 in 100), %d workflows", r.opts.ConsoleWorkflows),
		"ms", "pages", filtered, "")
	f.Note = "server time of GET /?type=Rare: a bounded scan of the index (≤ 5000 workflows read per request, then a cursor); informational"
	r.add(f)
	return nil
}

// seedBigWorkflow writes a workflow of n artefacts: the goal, then threads
// of Plan v1 → v2 → v3, each version reviewed (reject, reject, approve).
func seedBigWorkflow(ctx context.Context, bb *blackboard.Client, n int) (string, error) {
	goal := blackboard.NewGoal("a workflow of "+fmt.Sprint(n)+" artefacts", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, goal, blackboard.WriteAuth{}); err != nil {
		return "", err
	}
	written := 1
	create := func(a *blackboard.Artefact) error {
		written++
		return bb.CreateArtefact(ctx, a, blackboard.WriteAuth{})
	}
	for written < n {
		lid := blackboard.NewID()
		prev := goal.ID
		for v := 1; v <= 3 && written < n; v++ {
			id := lid
			if v > 1 {
				id = blackboard.NewID()
			}
			p := &blackboard.Artefact{ID: id, LogicalID: lid, Version: v, StructuralType: blackboard.StructuralStandard, Type: "Plan",
				Payload: benchPayload, SourceArtefacts: []string{prev}, ProducedByAgent: "planner", ProducedByRole: "planner",
				WorkflowID: goal.ID, Summary: "plan", Depth: 1}
			if err := create(p); err != nil {
				return "", err
			}
			if written >= n {
				break
			}
			verdict := `{"verdict":"reject","severity":"Major"}`
			if v == 3 {
				verdict = `{"verdict":"approve"}`
			}
			rid := blackboard.NewID()
			rv := &blackboard.Artefact{ID: rid, LogicalID: rid, Version: 1, StructuralType: blackboard.StructuralReview, Type: "Review",
				Payload: verdict, SourceArtefacts: []string{p.ID}, ProducedByAgent: "reviewer", ProducedByRole: "reviewer",
				WorkflowID: goal.ID, Summary: "review", Depth: 2}
			if err := create(rv); err != nil {
				return "", err
			}
			prev = p.ID
		}
	}
	return goal.ID, nil
}

// seedWorkflows writes n goals (workflows) with 32 concurrent writers;
// one in 100 also holds an artefact of type Rare.
func seedWorkflows(ctx context.Context, bb *blackboard.Client, n int) error {
	const workers = 32
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				g := blackboard.NewGoal(fmt.Sprintf("bench goal %d", i), 0, "user", nil)
				if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
					errs <- err
					return
				}
				if i%100 == 0 {
					id := blackboard.NewID()
					a := &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: blackboard.StructuralTerminal,
						Type: "Rare", Payload: "x", SourceArtefacts: []string{g.ID}, ProducedByRole: "bench", WorkflowID: g.ID, Depth: 1}
					if err := bb.CreateArtefact(ctx, a, blackboard.WriteAuth{}); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// consoleHop times 1-agent hops on one stack with no console client,
// then with opts.ConsoleClients browsers on the live list: each holds the
// event stream open and, like the page's script, fetches the list again
// at most every 250 ms while events arrive.
func (r *runner) consoleHop(ctx context.Context) error {
	s, err := r.startStack(ctx, stackSpec{name: "console-hop", agents: noopAgents(1, 0)})
	if err != nil {
		return err
	}
	defer s.Close()
	ro, err := redis.ParseURL(s.Redis.URL())
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	ro.PoolSize = 64
	rdb := redis.NewClient(ro)
	defer rdb.Close()
	bb, err := blackboard.New(ctx, rdb, blackboard.Options{Instance: s.Instance})
	if err != nil {
		return err
	}
	h, err := newConsole(bb)
	if err != nil {
		return err
	}
	hs := httptest.NewServer(h)
	defer hs.Close()

	none, _, err := r.runHops(ctx, s, 1)
	if err != nil {
		return err
	}
	cctx, stop := context.WithCancel(ctx)
	var fetches atomic.Int64
	var wg sync.WaitGroup
	connected := make(chan error, r.opts.ConsoleClients)
	for range r.opts.ConsoleClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			browse(cctx, hs.URL, connected, &fetches)
		}()
	}
	for range r.opts.ConsoleClients {
		if err := <-connected; err != nil {
			stop()
			wg.Wait()
			return err
		}
	}
	with, _, err := r.runHops(ctx, s, 1)
	stop()
	wg.Wait()
	if err != nil {
		return err
	}
	none.Name, none.Title = "console_hop_no_clients", "hop overhead, 1 agent, no console client"
	none.Target, none.Checks = "", nil
	none.Note = "as hop_1_agent, on the stack the next figure measures, before its console clients connect; informational"
	none.Status = none.judge()
	r.add(none)
	limit := none.P50 * 1.1
	f := NewFigure("console_hop_with_clients",
		fmt.Sprintf("hop overhead, 1 agent, %d console clients on the live list", r.opts.ConsoleClients), "ms", "hops", with.Values,
		"p50 within 10 % of no clients", Check{Stat: StatP50, Value: limit})
	f.Note = fmt.Sprintf("%d browsers (SSE /events open; GET / again at most every 250 ms while events arrive, as console.js does) made %d list fetches during the hops; the limit is 1.1 × the no-client p50 (%s ms)",
		r.opts.ConsoleClients, fetches.Load(), formatValue(none.P50))
	r.add(f)
	return nil
}

// browse is one browser on the console's list page: it opens the event
// stream (reporting on connected once it is open) and refetches the page
// at most every 250 ms while changes arrive, until ctx ends.
func browse(ctx context.Context, base string, connected chan<- error, fetches *atomic.Int64) {
	get := func(path string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+consoleToken)
		return http.DefaultClient.Do(req)
	}
	resp, err := get("/events")
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("bench: console /events answered %s", resp.Status)
	}
	connected <- err
	if err != nil {
		return
	}
	defer resp.Body.Close()
	changed := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data:") {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
		page, err := get("/")
		if err != nil {
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return
			}
			continue
		}
		_, _ = io.Copy(io.Discard, page.Body)
		page.Body.Close()
		fetches.Add(1)
	}
}
