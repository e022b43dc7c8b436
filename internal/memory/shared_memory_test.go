package memory

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// critique is a CT cluster's batch: four reviewers at one phase boundary.
func critique() []Contribution {
	return []Contribution{
		{ID: "a4", Agent: "ct-strategy", Step: "review 1", CreatedAtMs: 1000, Memory: AgentMemory{
			Status: StatusDone, HighestSeverity: "Low", KeyFindings: []string{"Scope is right"}}},
		{ID: "a1", Agent: "ct-security", Step: "review 1", CreatedAtMs: 1000, Memory: AgentMemory{
			Status: StatusNeedsRevision, Summary: "Auth is missing on /admin", HighestSeverity: "High",
			Decisions: []string{"Reviewed the API surface only"},
			ArtifactIndex: []ArtifactEntry{
				{Path: "ct-review/ct-security.md", Sections: []string{"§Findings"}, Note: "High items"},
				{Path: "design.md", Sections: []string{"§API"}},
			}}},
		{ID: "a2", Agent: "ct-scalability", Step: "review 1", CreatedAtMs: 900, Memory: AgentMemory{
			Status: StatusDone, HighestSeverity: "Medium", KeyFindings: []string{"One query per request", "No cache"},
			ArtifactIndex: []ArtifactEntry{{Path: "design.md", Sections: []string{"§Data", "§API"}, Note: "hot paths"}}}},
		{ID: "a3", Agent: "ct-maintainability", Step: "review 1", CreatedAtMs: 1000, Memory: AgentMemory{
			Status: StatusError, Summary: "could not read design.md"}},
	}
}

func TestMergeRendersSeedSections(t *testing.T) {
	shared, changed := Merge(SharedMemory{}, critique())
	if !changed {
		t.Fatal("Merge reported no change")
	}
	// Order: ct-scalability (900) first, then the rest by agent name.
	want := `# Operational Memory

## Artifact Index

| Artifact | Key Sections | Last Updated By |
|---|---|---|
| ct-review/ct-security.md | §Findings (High items) | ct-security, review 1 |
| design.md | §Data, §API (hot paths) | ct-security, review 1 |

## Recent Decisions

- [ct-security, review 1] Reviewed the API surface only

## Lessons Learned

None

## Recent Updates

- [ct-scalability, review 1] DONE (Medium): One query per request; No cache
- [ct-maintainability, review 1] ERROR: could not read design.md
- [ct-security, review 1] NEEDS_REVISION (High): Auth is missing on /admin
- [ct-strategy, review 1] DONE (Low): Scope is right
`
	if got := RenderShared(shared); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestMergeIsDeterministicAndIdempotent(t *testing.T) {
	batch := critique()
	once, changed := Merge(SharedMemory{}, batch)
	if !changed {
		t.Fatal("first merge reported no change")
	}
	reversed := make([]Contribution, len(batch))
	for i, c := range batch {
		reversed[len(batch)-1-i] = c
	}
	withDuplicate := append(append([]Contribution(nil), batch...), batch[1])

	tests := []struct {
		name        string
		start       SharedMemory
		batch       []Contribution
		wantChanged bool
	}{
		{name: "same batch again changes nothing", start: once, batch: batch, wantChanged: false},
		{name: "a subset again changes nothing", start: once, batch: batch[:2], wantChanged: false},
		{name: "reversed order gives the same memory", start: SharedMemory{}, batch: reversed, wantChanged: true},
		{name: "an id twice in one batch is merged once", start: SharedMemory{}, batch: withDuplicate, wantChanged: true},
		{name: "empty ids are skipped", start: once, batch: []Contribution{{Agent: "x", Memory: AgentMemory{Status: StatusDone}}}, wantChanged: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := Merge(tt.start, tt.batch)
			if changed != tt.wantChanged {
				t.Fatalf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if !bytes.Equal(got.Encode(), once.Encode()) {
				t.Fatalf("memory differs:\n got %s\nwant %s", got.Encode(), once.Encode())
			}
		})
	}
}

func TestMergeDoesNotModifyItsArgument(t *testing.T) {
	start, _ := Merge(SharedMemory{}, critique())
	before := start.Encode()
	next, changed := Merge(start, []Contribution{{ID: "b1", Agent: "ct-security", Step: "review 2", Memory: AgentMemory{
		Status: StatusDone, Summary: "Auth added", ArtifactIndex: []ArtifactEntry{{Path: "design.md", Sections: []string{"§Auth"}}}}}})
	if !changed {
		t.Fatal("no change")
	}
	if !bytes.Equal(start.Encode(), before) {
		t.Fatalf("Merge modified its argument:\nbefore %s\nafter  %s", before, start.Encode())
	}
	if got := next.ArtifactIndex[len(next.ArtifactIndex)-1]; got.Path != "design.md" ||
		!reflect.DeepEqual(got.Sections, []string{"§Data", "§API", "§Auth"}) || got.UpdatedBy != "ct-security, review 2" || got.Note != "hot paths" {
		t.Fatalf("design.md row = %+v", got)
	}
}

func TestMergeLessons(t *testing.T) {
	nr := AgentMemory{Status: StatusNeedsRevision, HighestSeverity: "Major", Summary: "No tests for /health"}
	done := AgentMemory{Status: StatusDone, Summary: "Tests cover /health"}
	tests := []struct {
		name    string
		batches [][]Contribution
		want    []string // rendered lessons
	}{
		{
			name: "needs revision then done",
			batches: [][]Contribution{
				{{ID: "1", Agent: "reviewer", Step: "iteration 1", Memory: nr}},
				{{ID: "2", Agent: "reviewer", Step: "iteration 2", Memory: done}},
			},
			want: []string{"[reviewer, iteration 2] No tests for /health (NEEDS_REVISION, Major, at iteration 1) → Tests cover /health"},
		},
		{
			name: "error then done in one batch, ordered by time",
			batches: [][]Contribution{{
				{ID: "z", Agent: "writer", Step: "attempt 2", CreatedAtMs: 2, Memory: AgentMemory{Status: StatusDone, KeyFindings: []string{"wrote plan.md"}}},
				{ID: "y", Agent: "writer", Step: "attempt 1", CreatedAtMs: 1, Memory: AgentMemory{Status: StatusError}},
			}},
			want: []string{"[writer, attempt 2] ERROR, at attempt 1 → wrote plan.md"},
		},
		{
			name: "the latest issue is the one resolved",
			batches: [][]Contribution{
				{{ID: "1", Agent: "r", Memory: nr}},
				{{ID: "2", Agent: "r", Memory: AgentMemory{Status: StatusNeedsRevision, KeyFindings: []string{"Tests flaky"}}}},
				{{ID: "3", Agent: "r", Memory: AgentMemory{Status: StatusDone}}},
			},
			want: []string{"[r] Tests flaky (NEEDS_REVISION) → resolved"},
		},
		{
			name: "done twice is no lesson",
			batches: [][]Contribution{
				{{ID: "1", Agent: "r", Memory: done}},
				{{ID: "2", Agent: "r", Memory: done}},
			},
			want: nil,
		},
		{
			name: "another agent's done resolves nothing",
			batches: [][]Contribution{
				{{ID: "1", Agent: "r1", Memory: nr}},
				{{ID: "2", Agent: "r2", Memory: done}},
			},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s SharedMemory
			for _, b := range tt.batches {
				s, _ = Merge(s, b)
			}
			var got []string
			for _, e := range s.LessonsLearned {
				got = append(got, e.line())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("lessons = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMergePrunesBoundedSectionsButNeverLessons(t *testing.T) {
	const cycles = 30 // more than every bound but the artifact index
	var s SharedMemory
	for i := range cycles {
		s, _ = Merge(s, []Contribution{
			{ID: fmt.Sprintf("nr-%02d", i), Agent: "reviewer", Step: fmt.Sprintf("iteration %d", i), CreatedAtMs: int64(2 * i), Memory: AgentMemory{
				Status: StatusNeedsRevision, Summary: fmt.Sprintf("issue %d", i), Decisions: []string{fmt.Sprintf("decision %d", i)}}},
			{ID: fmt.Sprintf("ok-%02d", i), Agent: "reviewer", Step: fmt.Sprintf("iteration %d", i), CreatedAtMs: int64(2*i + 1), Memory: AgentMemory{
				Status: StatusDone, Summary: fmt.Sprintf("fixed %d", i)}},
		})
	}
	tests := []struct {
		name      string
		entries   []Entry
		wantLen   int
		wantFirst string
		wantLast  string
	}{
		{name: "lessons never pruned", entries: s.LessonsLearned, wantLen: cycles, wantFirst: "issue 0 (NEEDS_REVISION, at iteration 0) → fixed 0", wantLast: "issue 29 (NEEDS_REVISION, at iteration 29) → fixed 29"},
		{name: "recent decisions keep the newest", entries: s.RecentDecisions, wantLen: MaxRecentDecisions, wantFirst: "decision 10", wantLast: "decision 29"},
		{name: "recent updates keep the newest", entries: s.RecentUpdates, wantLen: MaxRecentUpdates, wantFirst: "NEEDS_REVISION: issue 20", wantLast: "DONE: fixed 29"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.entries) != tt.wantLen {
				t.Fatalf("len = %d, want %d", len(tt.entries), tt.wantLen)
			}
			if first, last := tt.entries[0].Text, tt.entries[len(tt.entries)-1].Text; first != tt.wantFirst || last != tt.wantLast {
				t.Fatalf("first %q last %q, want %q and %q", first, last, tt.wantFirst, tt.wantLast)
			}
		})
	}
	if len(s.MergedIDs) != 2*cycles {
		t.Errorf("MergedIDs has %d ids, want %d: they are never pruned", len(s.MergedIDs), 2*cycles)
	}
}

func TestMergePrunesArtifactIndex(t *testing.T) {
	var s SharedMemory
	for i := range MaxArtifactRows + 5 {
		s, _ = Merge(s, []Contribution{{ID: fmt.Sprint(i), Agent: "w", Memory: AgentMemory{Status: StatusDone,
			ArtifactIndex: []ArtifactEntry{{Path: fmt.Sprintf("f%02d.md", i)}}}}})
		if i == 30 {
			// f00.md is touched again: it becomes the most recent and survives.
			s, _ = Merge(s, []Contribution{{ID: "again", Agent: "w", Memory: AgentMemory{Status: StatusDone,
				ArtifactIndex: []ArtifactEntry{{Path: "f00.md", Sections: []string{"§New"}}}}}})
		}
	}
	if len(s.ArtifactIndex) != MaxArtifactRows {
		t.Fatalf("%d rows, want %d", len(s.ArtifactIndex), MaxArtifactRows)
	}
	var paths []string
	for _, r := range s.ArtifactIndex {
		paths = append(paths, r.Path)
	}
	joined := strings.Join(paths, " ")
	for _, tt := range []struct {
		name    string
		path    string
		present bool
	}{
		{name: "touched again survives", path: "f00.md", present: true},
		{name: "oldest untouched dropped", path: "f01.md", present: false},
		{name: "fifth oldest dropped", path: "f05.md", present: false},
		{name: "sixth oldest kept", path: "f06.md", present: true},
		{name: "newest kept", path: "f54.md", present: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Contains(joined, tt.path); got != tt.present {
				t.Fatalf("%s present = %v, want %v in %s", tt.path, got, tt.present, joined)
			}
		})
	}
}

func TestAddUpdate(t *testing.T) {
	start, _ := Merge(SharedMemory{}, critique())
	u := Update{Key: "review_decision:c1:1", Step: "review 1", Text: "review decision: rework (rework_at)\nread ct-security High"}
	once, changed := AddUpdate(start, u)
	if !changed {
		t.Fatal("first AddUpdate reported no change")
	}
	last := once.RecentUpdates[len(once.RecentUpdates)-1].line()
	if want := "[orchestrator, review 1] review decision: rework (rework_at) read ct-security High"; last != want {
		t.Fatalf("entry = %q, want %q", last, want)
	}
	tests := []struct {
		name string
		u    Update
	}{
		{name: "same key again", u: u},
		{name: "same key, other text", u: Update{Key: u.Key, Text: "something else"}},
		{name: "empty key", u: Update{Text: "x"}},
		{name: "empty text", u: Update{Key: "k", Text: " \n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := AddUpdate(once, tt.u)
			if changed || !bytes.Equal(got.Encode(), once.Encode()) {
				t.Fatalf("changed = %v; memory:\n%s\nwant\n%s", changed, got.Encode(), once.Encode())
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		s := once
		for i := range 2 * MaxRecentUpdates {
			s, _ = AddUpdate(s, Update{Key: fmt.Sprint(i), Agent: "orchestrator", Text: fmt.Sprint("update ", i)})
		}
		if len(s.RecentUpdates) != MaxRecentUpdates || s.RecentUpdates[0].Text != "update 20" {
			t.Fatalf("%d updates, first %q", len(s.RecentUpdates), s.RecentUpdates[0].Text)
		}
	})
}

func TestSharedJSON(t *testing.T) {
	full, _ := Merge(SharedMemory{}, critique())
	full, _ = AddUpdate(full, Update{Key: "k", Text: "decided"})
	tests := []struct {
		name string
		s    SharedMemory
	}{
		{name: "empty", s: SharedMemory{}},
		{name: "full", s: full},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.s.Encode()
			back, err := DecodeShared(data)
			if err != nil {
				t.Fatalf("DecodeShared: %v", err)
			}
			if again := back.Encode(); !bytes.Equal(again, data) {
				t.Fatalf("round trip differs:\n%s\n%s", data, again)
			}
			if RenderShared(back) != RenderShared(tt.s) {
				t.Fatal("rendering differs after a round trip")
			}
		})
	}

	t.Run("empty lists are written as []", func(t *testing.T) {
		want := `{"version":1,"artifact_index":[],"recent_decisions":[],"lessons_learned":[],"recent_updates":[],"agents":{},"merged_ids":[],"update_keys":[]}`
		if got := string(SharedMemory{}.Encode()); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})

	decodes := []struct {
		name    string
		data    string
		wantErr error // nil: success
	}{
		{name: "nothing stored yet", data: ""},
		{name: "unknown version", data: `{"version":2}`, wantErr: ErrSharedVersion},
		{name: "no version", data: `{"artifact_index":[]}`, wantErr: ErrSharedVersion},
	}
	for _, tt := range decodes {
		t.Run("decode "+tt.name, func(t *testing.T) {
			s, err := DecodeShared([]byte(tt.data))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("DecodeShared(%q) = %+v, %v; want %v", tt.data, s, err, tt.wantErr)
			}
		})
	}
	t.Run("decode not JSON", func(t *testing.T) {
		if _, err := DecodeShared([]byte("{")); err == nil || !strings.HasPrefix(err.Error(), "memory: decode shared memory:") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestRenderSharedEscapesTableCells(t *testing.T) {
	s, _ := Merge(SharedMemory{}, []Contribution{{ID: "1", Agent: "a|b", Memory: AgentMemory{Status: StatusDone,
		ArtifactIndex: []ArtifactEntry{{Path: "x|y.md", Sections: []string{"§A|B"}}}}}})
	if got := RenderShared(s); !strings.Contains(got, `| x\|y.md | §A\|B | a\|b |`) {
		t.Fatalf("row not escaped:\n%s", got)
	}
}
