package blackboard_test

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// pageAll follows ListArtefacts cursors to the end and returns every id and
// score in order.
func pageAll(tb testing.TB, c *blackboard.Client, q blackboard.PageQuery) (ids []string, scores []int64, pages int) {
	tb.Helper()
	for {
		p, err := c.ListArtefacts(tb.Context(), q)
		if err != nil {
			tb.Fatalf("page %d (cursor %q): %v", pages, q.Cursor, err)
		}
		pages++
		if int64(len(p.IDs)) > cmp.Or(q.Limit, 50) || len(p.IDs) != len(p.Scores) {
			tb.Fatalf("page %d has %d ids and %d scores, limit %d", pages, len(p.IDs), len(p.Scores), q.Limit)
		}
		ids = append(ids, p.IDs...)
		scores = append(scores, p.Scores...)
		if p.Next == "" {
			return ids, scores, pages
		}
		if pages > 1000 {
			tb.Fatal("the cursor never ends")
		}
		q.Cursor = p.Next
	}
}

// indexEntry is one member of a time index.
type indexEntry struct {
	id    string
	score int64
}

// newestFirst is the order ListArtefacts promises: score descending; ties
// in ZREVRANGE order (member descending).
func newestFirst(entries []indexEntry) (ids []string, scores []int64) {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b indexEntry) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(b.id, a.id))
	})
	for _, e := range sorted {
		ids = append(ids, e.id)
		scores = append(scores, e.score)
	}
	return ids, scores
}

// TestListArtefactsCursor pages through index entries whose scores are
// written directly, so many can share one millisecond (the server clock
// cannot be forced): every id must come back exactly once, newest first.
func TestListArtefactsCursor(t *testing.T) {
	t.Parallel()
	redistest.Shared(t) // each case makes its own client; skip the whole table in -short mode
	// scores builds n entries; score(i) gives the i-th score.
	gen := func(n int, score func(i int) int64) []indexEntry {
		out := make([]indexEntry, n)
		for i := range out {
			out[i] = indexEntry{blackboard.NewID(), score(i)}
		}
		return out
	}
	cases := []struct {
		name    string
		entries []indexEntry
		limit   int64
		pages   int
	}{
		{"all in one millisecond", gen(120, func(int) int64 { return 1732237000000 }), 50, 3},
		{"distinct milliseconds", gen(120, func(i int) int64 { return 1732237000000 + int64(i) }), 50, 3},
		{"ties across page boundaries", gen(120, func(i int) int64 {
			switch {
			case i < 20:
				return 900
			case i < 90:
				return 500 // 70 entries straddle pages 1 and 2
			default:
				return int64(100 + i)
			}
		}), 50, 3},
		{"a tie longer than two pages", gen(120, func(i int) int64 {
			if i < 5 || i >= 115 {
				return int64(i)
			}
			return 777
		}), 50, 3},
		{"pairs", gen(120, func(i int) int64 { return int64(i / 2) }), 50, 3},
		{"page size 1", gen(7, func(i int) int64 { return int64(i % 2) }), 1, 7},
		{"exact multiple", gen(100, func(int) int64 { return 5 }), 50, 2},
		{"default limit", gen(120, func(i int) int64 { return int64(i % 3) }), 0, 3},
		{"empty", nil, 50, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			raw := redistest.Raw(t)
			if len(tc.entries) > 0 {
				zs := make([]redis.Z, len(tc.entries))
				for i, e := range tc.entries {
					zs[i] = redis.Z{Score: float64(e.score), Member: e.id}
				}
				if err := raw.ZAdd(t.Context(), c.Keys().ArtefactIndex(), zs...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			ids, scores, pages := pageAll(t, c, blackboard.PageQuery{Limit: tc.limit})
			wantIDs, wantScores := newestFirst(tc.entries)
			if !slices.Equal(ids, wantIDs) || !slices.Equal(scores, wantScores) {
				t.Errorf("paged %d ids, want %d newest first, each once", len(ids), len(wantIDs))
				seen := map[string]int{}
				for _, id := range ids {
					seen[id]++
				}
				for _, e := range tc.entries {
					if seen[e.id] != 1 {
						t.Errorf("id %s (score %d) listed %d times", e.id, e.score, seen[e.id])
					}
				}
			}
			if pages != tc.pages {
				t.Errorf("%d pages, want %d", pages, tc.pages)
			}
			if n, err := c.CountArtefacts(t.Context()); err != nil || n != int64(len(tc.entries)) {
				t.Errorf("CountArtefacts = %d, %v; want %d", n, err, len(tc.entries))
			}
		})
	}
}

// TestListArtefactsCreated pages through 120 artefacts written by
// CreateArtefact (many in the same millisecond) and one workflow's subset.
func TestListArtefactsCreated(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	g := startWorkflow(t, c)
	other := startWorkflow(t, c)
	entries := []indexEntry{{g.ID, g.CreatedAtMs}, {other.ID, other.CreatedAtMs}}
	var mine []indexEntry
	for i := range 118 {
		wf := g.ID
		if i%3 == 0 {
			wf = other.ID
		}
		a := create(t, c, child(wf))
		entries = append(entries, indexEntry{a.ID, a.CreatedAtMs})
		if wf == other.ID {
			mine = append(mine, indexEntry{a.ID, a.CreatedAtMs})
		}
	}
	mine = append(mine, indexEntry{other.ID, other.CreatedAtMs})

	ids, _, _ := pageAll(t, c, blackboard.PageQuery{Limit: 50})
	if want, _ := newestFirst(entries); !slices.Equal(ids, want) {
		t.Errorf("listed %d artefacts, want all 120 newest first, each once", len(ids))
	}
	ids, _, _ = pageAll(t, c, blackboard.PageQuery{Limit: 7, WorkflowID: other.ID})
	if want, _ := newestFirst(mine); !slices.Equal(ids, want) {
		t.Errorf("listed %d artefacts of the workflow, want %d", len(ids), len(want))
	}
}

func TestListArtefactsTimeBounds(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	var entries []indexEntry
	for i := range 10 {
		entries = append(entries, indexEntry{blackboard.NewID(), int64(100 + 10*i)}) // 100..190
	}
	for _, e := range entries {
		if err := raw.ZAdd(t.Context(), c.Keys().ArtefactIndex(), redis.Z{Score: float64(e.score), Member: e.id}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name         string
		since, until int64
		limit        int64
		want         []indexEntry
	}{
		{"since (inclusive)", 150, 0, 2, entries[5:]},
		{"until (inclusive)", 0, 120, 2, entries[:3]},
		{"both", 130, 160, 3, entries[3:7]},
		{"nothing in range", 191, 0, 2, nil},
	}
	for _, tc := range cases {
		ids, _, _ := pageAll(t, c, blackboard.PageQuery{SinceMs: tc.since, UntilMs: tc.until, Limit: tc.limit})
		if want, _ := newestFirst(tc.want); !slices.Equal(ids, want) {
			t.Errorf("%s: got %v, want %v", tc.name, ids, want)
		}
	}
}

func TestListArtefactsInvalid(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	cases := []struct {
		name string
		q    blackboard.PageQuery
	}{
		{"cursor without offset", blackboard.PageQuery{Cursor: "123"}},
		{"negative offset", blackboard.PageQuery{Cursor: "123:-1"}},
		{"garbage cursor", blackboard.PageQuery{Cursor: "next"}},
		{"bad workflow id", blackboard.PageQuery{WorkflowID: "w"}},
	}
	for _, tc := range cases {
		_, err := c.ListArtefacts(t.Context(), tc.q)
		if !errors.Is(err, blackboard.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", tc.name, err)
		}
	}
}

func TestResolveID(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	// Ids with chosen prefixes; the instance is private, so they are
	// unique here.
	withPrefix := func(p string, n int) string {
		return fmt.Sprintf("%s-0000-4000-8000-%012d", p, n)
	}
	unique := withPrefix("abcd1111", 1)
	twinA, twinB := withPrefix("abcd2222", 1), withPrefix("abcd2222", 2)
	for _, id := range []string{unique, twinA, twinB} {
		a := goal()
		a.ID, a.LogicalID, a.WorkflowID = id, id, id
		create(t, c, a)
	}
	many := make([]string, 12)
	g := startWorkflow(t, c)
	for i := range many {
		a := child(g.ID)
		a.ID, a.LogicalID = withPrefix("eeee0000", i), withPrefix("eeee0000", i)
		many[i] = create(t, c, a).ID
	}

	cases := []struct {
		name       string
		kind       blackboard.ResolvePrefix
		prefix     string
		want       string
		err        error
		candidates []string
	}{
		{"unique short prefix", blackboard.PrefixArtefact, "abcd1", unique, nil, nil},
		{"full id", blackboard.PrefixArtefact, twinB, twinB, nil, nil},
		{"prefix with a dash", blackboard.PrefixArtefact, "abcd2222-0000-4000-8000-000000000001", twinA, nil, nil},
		{"ambiguous", blackboard.PrefixArtefact, "abcd2", "", blackboard.ErrAmbiguous, []string{twinA, twinB}},
		{"ambiguous across three", blackboard.PrefixArtefact, "abcd", "", blackboard.ErrAmbiguous, []string{unique, twinA, twinB}},
		{"ambiguous lists up to 10", blackboard.PrefixArtefact, "eeee", "", blackboard.ErrAmbiguous, many[:10]},
		{"missing", blackboard.PrefixArtefact, "ffff", "", blackboard.ErrNotFound, nil},
		{"artefact prefix in the claim index", blackboard.PrefixClaim, "abcd1", "", blackboard.ErrNotFound, nil},
		{"too short", blackboard.PrefixArtefact, "abc", "", blackboard.ErrInvalid, nil},
		{"too long", blackboard.PrefixArtefact, unique + "0", "", blackboard.ErrInvalid, nil},
		{"uppercase", blackboard.PrefixArtefact, "ABCD", "", blackboard.ErrInvalid, nil},
		{"not hex", blackboard.PrefixArtefact, "abcg", "", blackboard.ErrInvalid, nil},
		{"lex range syntax", blackboard.PrefixArtefact, "[abc", "", blackboard.ErrInvalid, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.ResolveID(ctx, tc.kind, tc.prefix)
			if tc.err == nil {
				if err != nil || got != tc.want {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			wantErr(t, err, tc.err)
			if got != "" {
				t.Errorf("got id %q with the error", got)
			}
			if tc.candidates != nil {
				var amb *blackboard.AmbiguousError
				if !errors.As(err, &amb) || amb.Prefix != tc.prefix || !slices.Equal(amb.Candidates, tc.candidates) {
					t.Errorf("error %v: want *AmbiguousError for %q with candidates %v", err, tc.prefix, tc.candidates)
				}
			}
		})
	}
}
