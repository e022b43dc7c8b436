package cub

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// writer creates artefacts in one workflow for context tests.
type writer struct {
	t  *testing.T
	bb *blackboard.Client
	wf string
}

func newWriter(t *testing.T) *writer {
	t.Helper()
	bb := redistest.Client(t)
	g := blackboard.NewGoal("goal", 0, "user", nil)
	if err := bb.CreateArtefact(context.Background(), g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	return &writer{t: t, bb: bb, wf: g.ID}
}

// add writes a new thread (v1) with the given sources.
func (w *writer) add(typ string, sources ...string) *blackboard.Artefact {
	w.t.Helper()
	id := blackboard.NewID()
	a := &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: blackboard.StructuralStandard,
		Type: typ, Payload: typ, SourceArtefacts: sources, ProducedByRole: "r", WorkflowID: w.wf}
	if err := w.bb.CreateArtefact(context.Background(), a, blackboard.WriteAuth{}); err != nil {
		w.t.Fatal(err)
	}
	return a
}

// next writes the next version of a's thread.
func (w *writer) next(a *blackboard.Artefact, sources ...string) *blackboard.Artefact {
	w.t.Helper()
	n := *a
	n.ID = blackboard.NewID()
	n.Version = a.Version + 1
	n.SourceArtefacts = sources
	n.Payload = a.Type + " v" + string(rune('0'+n.Version))
	if err := w.bb.CreateArtefact(context.Background(), &n, blackboard.WriteAuth{}); err != nil {
		w.t.Fatal(err)
	}
	return &n
}

func ids(arts []*blackboard.Artefact) []string {
	out := make([]string, len(arts))
	for i, a := range arts {
		out[i] = a.ID
	}
	return out
}

func TestContextChainLatestVersionsDedupedAndOrdered(t *testing.T) {
	t.Parallel()
	w := newWriter(t)
	spec := w.add("Spec")
	specV2 := w.next(spec, spec.ID)
	plan := w.add("Plan", spec.ID)     // cites the old version of Spec
	design := w.add("Design", spec.ID) // so does this one
	target := w.add("Code", plan.ID, design.ID)
	chain, err := NewContextBuilder(w.bb, 10).Build(context.Background(), target, &blackboard.Claim{})
	if err != nil {
		t.Fatal(err)
	}
	// Spec appears once, as its latest version; newest first, ties by id.
	want := []*blackboard.Artefact{design, plan, specV2}
	sort.Slice(want, func(i, j int) bool {
		if want[i].CreatedAtMs != want[j].CreatedAtMs {
			return want[i].CreatedAtMs > want[j].CreatedAtMs
		}
		return want[i].ID < want[j].ID
	})
	if got := ids(chain.Artefacts); !slices.Equal(got, ids(want)) || chain.Truncated {
		t.Fatalf("chain %v (truncated %v), want %v", got, chain.Truncated, ids(want))
	}
}

func TestContextChainDepthLimit(t *testing.T) {
	t.Parallel()
	w := newWriter(t)
	prev := w.add("A0")
	var all []*blackboard.Artefact
	for i := 1; i <= 12; i++ {
		prev = w.add("A", prev.ID)
		all = append(all, prev)
	}
	target := all[len(all)-1]
	chain, err := NewContextBuilder(w.bb, 5).Build(context.Background(), target, &blackboard.Claim{})
	if err != nil {
		t.Fatal(err)
	}
	if len(chain.Artefacts) != 5 || !chain.Truncated || chain.Levels != 5 {
		t.Fatalf("%d artefacts over %d levels (truncated %v), want 5 levels cut", len(chain.Artefacts), chain.Levels, chain.Truncated)
	}
	full, err := NewContextBuilder(w.bb, 20).Build(context.Background(), target, &blackboard.Claim{})
	if err != nil || full.Truncated || len(full.Artefacts) != 12 {
		t.Fatalf("depth 20: %d artefacts truncated=%v err=%v, want all 12", len(full.Artefacts), full.Truncated, err)
	}
}

func TestContextChainIncludesFeedbackAndSkipsTargetThread(t *testing.T) {
	t.Parallel()
	w := newWriter(t)
	goalish := w.add("Brief")
	v1 := w.add("Plan", goalish.ID)
	r1 := w.add("Review", v1.ID)
	r2 := w.add("Review", v1.ID)
	chain, err := NewContextBuilder(w.bb, 10).Build(context.Background(), v1,
		&blackboard.Claim{AdditionalContextIDs: []string{r1.ID, r2.ID}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, a := range chain.Artefacts {
		got[a.ID] = true
		if a.LogicalID == v1.LogicalID {
			t.Fatalf("the target's own thread is in its chain")
		}
	}
	if len(got) != 3 || !got[r1.ID] || !got[r2.ID] || !got[goalish.ID] {
		t.Fatalf("chain %v, want the brief and both reviews", ids(chain.Artefacts))
	}
}

func TestContextChainCacheSeesNewVersions(t *testing.T) {
	t.Parallel()
	w := newWriter(t)
	spec := w.add("Spec")
	plan := w.add("Plan", spec.ID)
	target := w.add("Code", plan.ID)
	b := NewContextBuilder(w.bb, 10)
	first, err := b.Build(context.Background(), target, &blackboard.Claim{})
	if err != nil || !slices.Equal(ids(first.Artefacts), []string{plan.ID, spec.ID}) && !slices.Equal(ids(first.Artefacts), []string{spec.ID, plan.ID}) {
		t.Fatalf("first build %v, %v", ids(first.Artefacts), err)
	}
	// Built again from the cache: the same chain.
	again, err := b.Build(context.Background(), target, &blackboard.Claim{})
	if err != nil || !slices.Equal(ids(again.Artefacts), ids(first.Artefacts)) {
		t.Fatalf("cached build %v, %v; want %v", ids(again.Artefacts), err, ids(first.Artefacts))
	}
	// A new version of Spec appears: the heads check notices and the chain
	// carries it, with its own sources.
	extra := w.add("Note")
	specV2 := w.next(spec, spec.ID, extra.ID)
	after, err := b.Build(context.Background(), target, &blackboard.Claim{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, a := range after.Artefacts {
		got[a.ID] = true
	}
	if !got[specV2.ID] || got[spec.ID] || !got[extra.ID] || !got[plan.ID] || len(got) != 3 {
		t.Fatalf("chain after a new version %v, want plan, spec v2 and its new source", ids(after.Artefacts))
	}
}
