package blackboard

import (
	"context"
	"net"
	"sync/atomic"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// A blocking stream read whose connection breaks is retried by go-redis
// on another connection, and the caller only sees the retry's result. Yet
// Redis may have served the first read: its entries now sit in the
// consumer's pending list while their reply went nowhere, and a read of
// new entries (">") never returns them. failedReads counts failed socket
// reads on every connection of a client, so that a consumer can tell when
// one of its reads may have lost its reply (see
// EventConsumer.LostReplies) and read its pending list again at once
// rather than at the next sweep.

// watchReads installs the counting dialer on rdb (on every node of a
// cluster) and returns the counter.
func watchReads(rdb redis.UniversalClient) *atomic.Uint64 {
	n := new(atomic.Uint64)
	h := readWatch{failed: n}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		cc.OnNewNode(func(node *redis.Client) { node.AddHook(h) })
	} else {
		rdb.AddHook(h)
	}
	return n
}

// readWatch wraps every connection the client dials.
type readWatch struct{ failed *atomic.Uint64 }

func (w readWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		wc := &watchedConn{Conn: conn, failed: w.failed}
		// go-redis checks a pooled connection's health through its file
		// descriptor when it has one; keep that possible, and keep it
		// impossible for connections (TLS) that have none.
		if sc, ok := conn.(syscall.Conn); ok {
			return &watchedSyscallConn{watchedConn: wc, sc: sc}, nil
		}
		return wc, nil
	}
}

func (readWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (readWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// watchedConn counts its failed reads.
type watchedConn struct {
	net.Conn
	failed *atomic.Uint64
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.failed.Add(1)
	}
	return n, err
}

// watchedSyscallConn is a watchedConn over a connection with a file
// descriptor.
type watchedSyscallConn struct {
	*watchedConn
	sc syscall.Conn
}

func (c *watchedSyscallConn) SyscallConn() (syscall.RawConn, error) { return c.sc.SyscallConn() }
