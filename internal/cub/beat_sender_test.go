package cub

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// onSender reports whether the calling goroutine is the sender's.
func onSender() bool {
	buf := make([]byte, 8<<10)
	return strings.Contains(string(buf[:runtime.Stack(buf, false)]), "(*beatSender).serve")
}

// runOn hands call to s and returns whether it ran on the sender's
// goroutine, failing the test if it does not run within a minute.
func runOn(t *testing.T, s *beatSender) bool {
	t.Helper()
	where := make(chan bool, 1)
	s.do(func() { where <- onSender() })
	select {
	case on := <-where:
		return on
	case <-time.After(time.Minute):
		t.Fatal("the call never ran")
		return false
	}
}

func TestBeatSenderRunsEveryCallOnItsOwnGoroutineWhileStarted(t *testing.T) {
	s := newBeatSender()
	if runOn(t, s) {
		t.Error("a call before start ran on the sender's goroutine")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s.start(ctx)
	for i := 0; i < 3; i++ {
		// A call's result reaches runOn just before serve marks itself
		// idle again: a call handed over in between would rightly run on
		// a goroutine of its own (the sender is busy), so wait for it.
		waitIdle(t, s)
		if !runOn(t, s) {
			t.Fatalf("call %d after start ran on a goroutine of its own, want the sender's", i)
		}
	}
}

// waitIdle returns once s waits for a call, failing the test if it does
// not within a minute.
func waitIdle(t *testing.T, s *beatSender) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		s.mu.Lock()
		idle := s.idle
		s.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the sender never became idle")
		}
		runtime.Gosched()
	}
}

func TestBeatSenderDoesNotQueueACallBehindAnUnansweredOne(t *testing.T) {
	s := newBeatSender()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s.start(ctx)
	stuck, release := make(chan bool, 1), make(chan struct{})
	defer close(release)
	s.do(func() { stuck <- onSender(); <-release })
	if !<-stuck {
		t.Fatal("the first call did not run on the sender's goroutine")
	}
	if runOn(t, s) {
		t.Error("the second call ran on the busy sender's goroutine, want one of its own")
	}
}

func TestBeatSenderRunsCallsAfterItStopped(t *testing.T) {
	s := newBeatSender()
	ctx, cancel := context.WithCancel(t.Context())
	s.start(ctx)
	cancel()
	// Whether serve has seen ctx end yet or not, every call runs.
	for i := 0; i < 3; i++ {
		runOn(t, s)
	}
}
