package cub

import (
	"context"
	"sync"
)

// beatSender runs the heartbeat round trips on one long-lived goroutine,
// so that the stack a round trip needs (go-redis's pipeline path is deep)
// is grown once and kept, not grown again on a new goroutine every beat.
// Growing a stack copies it, and the copy reads the frame tables of every
// function on it: after the daemon dropped its start-up pages
// (idlemem), that mapped about 1.5 MB of the executable back into an
// idle cub at its next beat. A call still unanswered when the next one comes (a dead network)
// never delays it: the next call then runs on a goroutine of its own, as
// every call did before.
//
// The zero value is not usable; use newBeatSender. Safe for concurrent
// use.
type beatSender struct {
	calls chan func()

	mu sync.Mutex
	// idle is true while serve waits for a call: the one call handed to
	// it at a time waits in calls, whose capacity is one.
	idle bool
}

func newBeatSender() *beatSender {
	return &beatSender{calls: make(chan func(), 1)}
}

// start serves calls on a goroutine of the sender's until ctx ends (a call
// in progress then finishes first); calls handed over after that run on
// goroutines of their own. Call it once.
func (s *beatSender) start(ctx context.Context) {
	s.setIdle(true) // now, so that a call right after start goes to serve
	go s.serve(ctx)
}

func (s *beatSender) serve(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			s.mu.Lock()
			s.idle = false
			select {
			case call := <-s.calls: // handed over just before ctx ended
				go call()
			default:
			}
			s.mu.Unlock()
			return
		case call := <-s.calls:
			call()
			s.setIdle(true)
		}
	}
}

// do runs call on the sender's goroutine when that waits for one, else
// (not started, stopped, or busy with an earlier call) on a goroutine of
// its own. It never blocks.
func (s *beatSender) do(call func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.idle {
		go call()
		return
	}
	s.idle = false
	s.calls <- call // never blocks: idle means calls is empty
}

func (s *beatSender) setIdle(idle bool) {
	s.mu.Lock()
	s.idle = idle
	s.mu.Unlock()
}
