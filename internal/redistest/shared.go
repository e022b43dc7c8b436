package redistest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
)

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
	counter    atomic.Int64
)

// Main runs a test package and stops the shared server afterwards. Use it
// from TestMain: func TestMain(m *testing.M) { redistest.Main(m) }.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run runs the tests, stops the shared server and returns the exit code,
// for a TestMain with more cleanup of its own.
func Run(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	return code
}

// Shared returns the package's redis-server, starting it on first use. In
// -short mode the calling test is skipped: integration tests need a real
// server, and -short promises to need nothing running.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: needs redis-server (run without -short)")
	}
	sharedOnce.Do(func() { shared, sharedErr = NewServer(ServerOptions{}) })
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return shared
}

// Instance returns an instance name no other test uses.
func Instance(tb testing.TB) string {
	tb.Helper()
	name := strings.ToLower(tb.Name())
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	short := strings.Trim(b.String(), "-")
	if len(short) > 40 {
		short = short[len(short)-40:]
	}
	return strings.Trim(fmt.Sprintf("t%d-%s-%s", counter.Add(1), uuid.NewString()[:6], short), "-")
}

// Client returns a blackboard client on the shared server for a fresh
// instance; it is closed when the test ends.
func Client(tb testing.TB, opts ...func(*blackboard.Options)) *blackboard.Client {
	tb.Helper()
	srv := Shared(tb)
	o := blackboard.Options{Instance: Instance(tb)}
	for _, f := range opts {
		f(&o)
	}
	c, err := blackboard.Dial(context.Background(), srv.URL(), o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Raw returns a plain go-redis client on the shared server, for tests that
// inspect keys the way an operator would with redis-cli.
func Raw(tb testing.TB) *redis.Client {
	tb.Helper()
	srv := Shared(tb)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: srv.Password})
	tb.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// NamedClient is Client on a go-redis pool of its own whose connections
// carry name in CLIENT LIST, so that a test can find them (Blocked) and
// cut them. opts tweaks the go-redis options (e.g. a short ReadTimeout).
func NamedClient(tb testing.TB, name string, opts ...func(*redis.Options)) *blackboard.Client {
	tb.Helper()
	srv := Shared(tb)
	ro := &redis.Options{Addr: srv.Addr, Password: srv.Password, ClientName: name}
	for _, f := range opts {
		f(ro)
	}
	rdb := redis.NewClient(ro)
	tb.Cleanup(func() { _ = rdb.Close() })
	c, err := blackboard.New(tb.Context(), rdb, blackboard.Options{Instance: Instance(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
