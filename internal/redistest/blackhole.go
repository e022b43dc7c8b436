package redistest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Blackhole is a TCP proxy in front of a Redis that can be cut: from then
// on it swallows whatever either side sends and closes nothing, as a
// pulled cable looks to a client (no answer, no reset). Cuts that refuse
// or reset connections (a killed server) are a different failure: see
// Server.Kill.
//
// Safe for concurrent use.
type Blackhole struct {
	ln     net.Listener
	target string
	cut    atomic.Bool

	mu    sync.Mutex
	conns []net.Conn
}

// NewBlackhole starts a proxy to target (host:port) on a free loopback
// port; cleanup closes it and every connection it holds.
func NewBlackhole(tb testing.TB, target string) *Blackhole {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	b := &Blackhole{ln: ln, target: target}
	go b.serve()
	tb.Cleanup(func() {
		_ = ln.Close()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.conns {
			_ = c.Close()
		}
	})
	return b
}

// Addr is the proxy's host:port.
func (b *Blackhole) Addr() string { return b.ln.Addr().String() }

// Cut stops all traffic both ways, for good.
func (b *Blackhole) Cut() { b.cut.Store(true) }

func (b *Blackhole) serve() {
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

// pipe copies src to dst until either side closes, dropping everything
// once the cable is cut.
func (b *Blackhole) pipe(src, dst net.Conn) {
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
