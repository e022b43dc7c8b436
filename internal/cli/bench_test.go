package cli

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// benchArtefacts is the size of the instance the hoard benchmarks read
// (first page with 100 000 artefacts ≤ 50 ms, short-id resolve
// ≤ 5 ms).
const (
	benchArtefacts = 100_000
	benchPerFlow   = 1000
)

var benchSeed struct {
	once     sync.Once
	instance string
	ids      []string
	err      error
}

// seedBench writes benchArtefacts artefacts once per test process, through
// the blackboard API (the real create script, so the real indexes), from
// many goroutines: 100 workflows of a goal and 999 artefacts each.
func seedBench(b *testing.B) (instance string, ids []string) {
	b.Helper()
	srv := redistest.Shared(b)
	benchSeed.once.Do(func() {
		ctx := context.Background()
		instance := redistest.Instance(b)
		bb, err := blackboard.Dial(ctx, srv.URL(), blackboard.Options{Instance: instance})
		if err != nil {
			benchSeed.err = err
			return
		}
		defer bb.Close()
		start := time.Now()
		flows := benchArtefacts / benchPerFlow
		ids := make([]string, 0, benchArtefacts)
		var mu sync.Mutex
		work := make(chan int)
		errs := make(chan error, 32)
		var wg sync.WaitGroup
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range work {
					g := blackboard.NewGoal("benchmark goal", 0, "user", nil)
					if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
						errs <- err
						return
					}
					local := []string{g.ID}
					for i := 1; i < benchPerFlow; i++ {
						id := blackboard.NewID()
						types := []string{"Plan", "CodeChange", "Review", "AuditNote"}
						a := &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: blackboard.StructuralStandard,
							Type: types[i%len(types)], Payload: strings.Repeat("x", 200), SourceArtefacts: []string{g.ID},
							ProducedByRole: "writer", ProducedByAgent: "writer", WorkflowID: g.ID,
							Summary: fmt.Sprintf("artefact %d", i), Depth: 1}
						if err := bb.CreateArtefact(ctx, a, blackboard.WriteAuth{}); err != nil {
							errs <- err
							return
						}
						local = append(local, id)
					}
					mu.Lock()
					ids = append(ids, local...)
					mu.Unlock()
				}
			}()
		}
		for i := 0; i < flows; i++ {
			select {
			case work <- i:
			case err := <-errs:
				benchSeed.err = err
			}
			if benchSeed.err != nil {
				break
			}
		}
		close(work)
		wg.Wait()
		if benchSeed.err == nil && len(ids) != benchArtefacts {
			benchSeed.err = fmt.Errorf("seeded %d artefacts, want %d", len(ids), benchArtefacts)
		}
		benchSeed.instance, benchSeed.ids = instance, ids
		b.Logf("seeded %d artefacts in %s", len(ids), time.Since(start).Round(time.Millisecond))
	})
	if benchSeed.err != nil {
		b.Fatal(benchSeed.err)
	}
	return benchSeed.instance, benchSeed.ids
}

// benchApp returns an App on the seeded instance that writes to nowhere.
func benchApp(b *testing.B, instance string) *App {
	env := map[string]string{"SETT_REDIS_URL": redistest.Shared(b).URL(), "SETT_INSTANCE": instance}
	return &App{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Dir: b.TempDir(), Now: time.Now,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
}

// runBench runs `sett args...` b.N times, as a user would: each run
// connects (dial, PING, script preload), reads and renders.
func runBench(b *testing.B, app *App, args ...string) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		root := NewRoot(app)
		root.SetArgs(args)
		if err := root.ExecuteContext(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHoardFirstPage is `sett hoard` end to end on 100 000 artefacts.
func BenchmarkHoardFirstPage(b *testing.B) {
	instance, _ := seedBench(b)
	runBench(b, benchApp(b, instance), "hoard")
}

// BenchmarkHoardFirstPageRead is the work behind the first page with an
// open connection: one ZREVRANGEBYSCORE, one pipelined HGETALL of 20, one
// pipeline of id neighbours for unique short ids, and the rendering.
func BenchmarkHoardFirstPageRead(b *testing.B) {
	instance, _ := seedBench(b)
	bb, err := blackboard.Dial(b.Context(), redistest.Shared(b).URL(), blackboard.Options{Instance: instance})
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	style := outputStyle{}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		scan, err := bb.ScanArtefacts(b.Context(), blackboard.ScanQuery{PageQuery: blackboard.PageQuery{Limit: 20}})
		if err != nil || len(scan.Artefacts) != 20 {
			b.Fatalf("scan: %d artefacts, %v", len(scan.Artefacts), err)
		}
		ids := make([]string, len(scan.Artefacts))
		for i, a := range scan.Artefacts {
			ids[i] = a.ID
		}
		shorts, err := bb.ShortIDs(b.Context(), ids, 8)
		if err != nil {
			b.Fatal(err)
		}
		renderArtefactTable(io.Discard, style, scan.Artefacts, shorts)
	}
}

// BenchmarkHoardFilteredPage is `sett hoard --type AuditNote` end to end:
// a quarter of the artefacts match, so the filter fills a page from one
// index page.
func BenchmarkHoardFilteredPage(b *testing.B) {
	instance, _ := seedBench(b)
	runBench(b, benchApp(b, instance), "hoard", "--type", "Audit*")
}

// benchShortIDs picks n random seeded ids with the unique short ids that
// listings show for them (among 100 000 ids a few 8-character prefixes
// are shared; those get longer ones).
func benchShortIDs(b *testing.B, bb *blackboard.Client, ids []string, n int) (full, short []string) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		full = append(full, ids[r.IntN(len(ids))])
	}
	shorts, err := bb.ShortIDs(b.Context(), full, 8)
	if err != nil {
		b.Fatal(err)
	}
	for _, id := range full {
		short = append(short, shorts[id])
	}
	return full, short
}

// BenchmarkResolveShortID expands a short id among 100 000 ids (one
// ZRANGEBYLEX) with an open connection.
func BenchmarkResolveShortID(b *testing.B) {
	instance, ids := seedBench(b)
	bb, err := blackboard.Dial(b.Context(), redistest.Shared(b).URL(), blackboard.Options{Instance: instance})
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	full, short := benchShortIDs(b, bb, ids, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		want := full[i%len(full)]
		got, err := resolveArtefactID(b.Context(), bb, "artefact", short[i%len(short)])
		if err != nil || got != want {
			b.Fatalf("resolve %s = %s, %v", short[i%len(short)], got, err)
		}
	}
}

// BenchmarkHoardShowShortID is `sett hoard <short id>` end to end: it
// connects, resolves the prefix, and reads the artefact with its thread,
// claims, sources, results and workflow.
func BenchmarkHoardShowShortID(b *testing.B) {
	instance, ids := seedBench(b)
	app := benchApp(b, instance)
	bb, err := blackboard.Dial(b.Context(), redistest.Shared(b).URL(), blackboard.Options{Instance: instance})
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	_, short := benchShortIDs(b, bb, ids, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		root := NewRoot(app)
		root.SetArgs([]string{"hoard", short[i%len(short)]})
		if err := root.ExecuteContext(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
