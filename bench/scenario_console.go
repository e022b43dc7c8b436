package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/console"
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

// consoleHop times 1-agent hops on one stack whose console (`sett ui`,
// its own process) has no client, and with opts.ConsoleClients browsers
// (sett-bench-browsers, another process) on its live list, in alternating
// blocks so that a change in the machine's load falls on both.
func (r *runner) consoleHop(ctx context.Context) error {
	s, err := r.startStack(ctx, stackSpec{name: "console-hop", agents: noopAgents(1, 0)})
	if err != nil {
		return err
	}
	defer s.Close()
	ui := exec.CommandContext(ctx, r.bins.Sett, "ui", "--listen", "127.0.0.1:0", "--token", consoleToken,
		"--redis-url", s.Redis.URL(), "--name", s.Instance)
	ui.Dir, ui.Stderr = s.Dir, io.Discard
	out, err := ui.StdoutPipe()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := ui.Start(); err != nil {
		return fmt.Errorf("bench: sett ui: %w", err)
	}
	defer func() {
		_ = ui.Process.Signal(os.Interrupt)
		_ = ui.Wait()
	}()
	lines := bufio.NewScanner(out)
	base := ""
	for base == "" && lines.Scan() {
		if m := consoleURL.FindString(lines.Text()); m != "" {
			base = m
		}
	}
	if base == "" {
		return errors.New("bench: sett ui printed no URL")
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()

	const blocks = 3
	samples := r.opts.HopSamples
	r.opts.HopSamples = max(1, samples/blocks)
	defer func() { r.opts.HopSamples = samples }()
	var none, with []float64
	var fetches int64
	for b := 0; b < blocks; b++ {
		f, _, err := r.runHops(ctx, s, 1)
		if err != nil {
			return err
		}
		none = append(none, f.Values...)
		n, err := r.hopsWithBrowsers(ctx, s, base, &with)
		if err != nil {
			return err
		}
		fetches += n
	}
	f := NewFigure("console_hop_no_clients", "hop overhead, 1 agent, console without clients", "ms", "hops", none, "")
	f.Note = "as hop_1_agent, with `sett ui` running on the stack and no page open; alternating blocks with the next figure; informational"
	r.add(f)
	limit := f.P50 * 1.1
	g := NewFigure("console_hop_with_clients",
		fmt.Sprintf("hop overhead, 1 agent, %d console clients on the live list", r.opts.ConsoleClients), "ms", "hops", with,
		"p50 within 10 % of no clients", Check{Stat: StatP50, Value: limit})
	g.Note = fmt.Sprintf("%d browsers in their own process (SSE /events open; GET / 250 ms after a change, at most once a second while changes keep coming, as console.js does) fetched %d list pages during the hops; the limit is 1.1 × the no-client p50 (%s ms)",
		r.opts.ConsoleClients, fetches, formatValue(f.P50))
	r.add(g)
	return nil
}

var consoleURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)

// hopsWithBrowsers times one block of hops with the browsers connected,
// appending to with; it returns the list pages they fetched.
func (r *runner) hopsWithBrowsers(ctx context.Context, s *stack, base string, with *[]float64) (int64, error) {
	br := exec.CommandContext(ctx, r.bins.Browsers, "-url", base, "-token", consoleToken, "-n", fmt.Sprint(r.opts.ConsoleClients))
	br.Stderr = os.Stderr
	in, err := br.StdinPipe()
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	out, err := br.StdoutPipe()
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	if err := br.Start(); err != nil {
		return 0, fmt.Errorf("bench: browsers: %w", err)
	}
	defer func() { _ = br.Wait() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "connected ") {
		in.Close()
		return 0, fmt.Errorf("bench: the browsers did not connect (%q)", lines.Text())
	}
	f, _, err := r.runHops(ctx, s, 1)
	in.Close()
	if err != nil {
		return 0, err
	}
	*with = append(*with, f.Values...)
	var n int64
	if lines.Scan() {
		_, _ = fmt.Sscanf(lines.Text(), "fetches %d", &n)
	}
	return n, nil
}
