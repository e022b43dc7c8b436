package orchestrator

import (
	"context"
	"sync"
	"testing"
)

func TestDispatcherKeepsOrderPerKey(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	d := NewDispatcher(4, 64)
	done := make(chan struct{})
	go func() { _ = d.Run(ctx); close(done) }()
	var mu sync.Mutex
	var got []int
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		i := i
		wg.Add(1)
		d.Submit(ctx, "claim-1", func(context.Context) {
			defer wg.Done()
			mu.Lock()
			got = append(got, i)
			mu.Unlock()
		})
	}
	wg.Wait()
	for i, v := range got {
		if v != i {
			t.Fatalf("tasks of one key ran out of order: %v", got)
		}
	}
	cancel()
	<-done
}

func TestDispatcherRunsKeysConcurrently(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := NewDispatcher(8, 4)
	go func() { _ = d.Run(ctx) }()
	// Find two keys that land on different workers, then block the first
	// task until the second has run: only concurrent workers finish.
	a, b := "a", ""
	for i := 0; b == ""; i++ {
		k := string(rune('b' + i))
		if d.queueFor(k) != d.queueFor(a) {
			b = k
		}
	}
	second := make(chan struct{})
	finished := make(chan struct{})
	d.Submit(ctx, a, func(context.Context) { <-second; close(finished) })
	d.Submit(ctx, b, func(context.Context) { close(second) })
	<-finished
}

func TestDispatcherSubmitAfterCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	d := NewDispatcher(1, 0)
	cancel()
	if d.Submit(ctx, "k", func(context.Context) {}) {
		t.Fatal("Submit accepted a task with a cancelled context and no worker")
	}
}
