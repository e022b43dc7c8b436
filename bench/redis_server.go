package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/settdev/sett/internal/redistest"
)

// startRedisServer starts a redis-server configured the way the local
// runtime configures an instance's Redis (internal/runtime/local): bound
// to loopback, a password, append-only persistence with fsync every
// second, no RDB snapshots, a Unix socket for the daemons; data, config
// and socket in dir. appendOnly false turns
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
		AppendOnly: appendOnly, AppendFsync: "everysec", Dir: dir,
		Extra: []string{`unixsocket "` + socketPath(dir) + `"`, "unixsocketperm 700"}})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return srv, nil
}

// socketPath is where the server in dir listens for Unix socket clients.
func socketPath(dir string) string { return filepath.Join(dir, "redis.sock") }

// socketURL is the URL of srv's Unix socket, the way the local runtime
// hands it to the daemons.
func socketURL(srv *redistest.Server) string {
	return (&url.URL{Scheme: "unix", User: url.UserPassword("", srv.Password), Path: socketPath(srv.Dir()), RawQuery: "db=0"}).String()
}

// urlVia is the URL of srv reached through addr (a proxy).
func urlVia(srv *redistest.Server, addr string) string {
	return (&url.URL{Scheme: "redis", User: url.UserPassword("", srv.Password), Host: addr, Path: "/0"}).String()
}
