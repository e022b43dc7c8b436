package console

import (
	"context"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// waitChange waits (with a deadline) until l holds a change of workflow wf.
func waitChange(t *testing.T, l *listener, wf string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case <-l.wake:
			cs, _ := l.take()
			for _, c := range cs {
				if c.Workflow == wf {
					return
				}
			}
		case <-deadline:
			t.Fatalf("no change of workflow %s reached the listener", wf)
		}
	}
}

func TestOneReaderServesEveryPageAndStopsWithTheLast(t *testing.T) {
	bb := redistest.Client(t)
	ctx := context.Background()
	h := &hub{bb: bb, warn: func(err error) { t.Errorf("reader: %v", err) }}
	a, unsubA, err := h.subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, unsubB, err := h.subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := blackboard.NewGoal("pushed", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	waitChange(t, a, g.ID)
	waitChange(t, b, g.ID)
	unsubA()
	h.mu.Lock()
	running := h.stop != nil
	h.mu.Unlock()
	if !running {
		t.Fatal("the reader stopped while a page still listens")
	}
	unsubB()
	h.mu.Lock()
	running = h.stop != nil
	h.mu.Unlock()
	if running {
		t.Fatal("the reader runs on with no page listening")
	}
}

func TestASlowPageGetsOneResyncInsteadOfUnboundedChanges(t *testing.T) {
	l := &listener{wake: make(chan struct{}, 1)}
	for i := 0; i < maxPending; i++ {
		l.add([]change{{Type: "claim_created", Workflow: "w"}}, "1-1")
	}
	if cs, _ := l.take(); len(cs) != maxPending {
		t.Fatalf("%d changes held, want %d", len(cs), maxPending)
	}
	for i := 0; i <= maxPending; i++ {
		l.add([]change{{Type: "claim_created", Workflow: "w"}}, "2-1")
	}
	l.add([]change{{Type: "claim_created", Workflow: "w"}}, "3-1")
	cs, id := l.take()
	if len(cs) != 1 || cs[0].Type != "resync" || id != "3-1" {
		t.Fatalf("changes %+v up to %s, want one resync up to 3-1", cs, id)
	}
}

func TestReadsAreSharedWithinAGenerationOnlyWhilePagesListen(t *testing.T) {
	rc := &readCache{}
	reads := 0
	read := func() (int, error) { reads++; return reads, nil }
	get(rc, "k", read)
	get(rc, "k", read)
	if reads != 2 {
		t.Fatalf("%d reads without a listening page, want 2 (nothing cached)", reads)
	}
	rc.setLive(true)
	a, _ := get(rc, "k", read)
	b, _ := get(rc, "k", read)
	if reads != 3 || a != b {
		t.Fatalf("%d reads (values %d, %d) within one generation, want 3 and the same value", reads, a, b)
	}
	get(rc, "other", read)
	rc.bump()
	if c, _ := get(rc, "k", read); c == a {
		t.Fatal("a new generation served the old value")
	}
	rc.setLive(false)
	before := reads
	get(rc, "k", read)
	get(rc, "k", read)
	if reads != before+2 {
		t.Fatal("values cached after the last page left")
	}
}
