package blackboard_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/pkg/blackboard"
)

// blackhole forwards TCP connections to a Redis until it is cut; from
// then on it swallows whatever either side sends and closes nothing: a
// pulled cable as the client sees it, with no answer and no reset.
type blackhole struct {
	ln     net.Listener
	target string
	cut    atomic.Bool

	mu    sync.Mutex
	conns []net.Conn
}

func newBlackhole(t *testing.T, target string) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackhole{ln: ln, target: target}
	go b.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.conns {
			_ = c.Close()
		}
	})
	return b
}

func (b *blackhole) addr() string { return b.ln.Addr().String() }

func (b *blackhole) serve() {
	for {
		in, err := b.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", b.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		b.mu.Lock()
		b.conns = append(b.conns, in, out)
		b.mu.Unlock()
		go b.pipe(in, out)
		go b.pipe(out, in)
	}
}

// pipe copies src to dst until either closes, dropping everything once
// the cable is cut.
func (b *blackhole) pipe(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !b.cut.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestCutOffCallEndsWithItsContext: on a connection that stops answering
// (packets dropped, no reset), a call returns once its context's deadline
// passes, not after go-redis's own read timeout — here an hour — and its
// retries. A cub cut off from Redis must learn it from its heartbeat in
// time to stop its tools before their leases expire.
func TestCutOffCallEndsWithItsContext(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	bh := newBlackhole(t, srv.Addr)
	url := "redis://:" + srv.Password + "@" + bh.addr() + "/0?read_timeout=1h&write_timeout=1h"
	c, err := blackboard.Dial(t.Context(), url, blackboard.Options{Instance: redistest.Instance(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Heartbeat(t.Context(), "me", "me-1", time.Second, nil, 0); err != nil {
		t.Fatalf("heartbeat before the cut: %v", err)
	}
	bh.cut.Store(true)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.Heartbeat(ctx, "me", "me-1", time.Second, nil, 0)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a heartbeat went through a cut cable")
		}
		t.Logf("heartbeat on a cut connection: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("a heartbeat on a cut-off connection ignored its context's deadline")
	}
}
