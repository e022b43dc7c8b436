package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"

	"github.com/settdev/sett/internal/redistest"
)

// startRedisServer starts a redis-server configured the way the local
// runtime configures an instance's Redis (internal/runtime/local): bound
// to loopback, a password, append-only persistence with fsync every
// second, no RDB snapshots; data and config in dir. appendOnly false turns
// persistence off (for the read-only listing benchmarks, which seed
// 100 000 artefacts). Stop it with Shutdown.
func startRedisServer(ctx context.Context, dir string, appendOnly bool) (*redistest.Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	srv, err := redistest.NewServer(redistest.ServerOptions{Password: hex.EncodeToString(raw),
		AppendOnly: appendOnly, AppendFsync: "everysec", Dir: dir})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return srv, nil
}

// urlVia is the URL of srv reached through addr (a proxy).
func urlVia(srv *redistest.Server, addr string) string {
	return (&url.URL{Scheme: "redis", User: url.UserPassword("", srv.Password), Host: addr, Path: "/0"}).String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("bench: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
