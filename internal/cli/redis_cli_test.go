package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
)

func TestRedisCLITargetFromURL(t *testing.T) {
	tests := []struct {
		name     string
		url      string
		wantArgs []string
		wantEnv  []string
	}{
		{name: "runtime record", url: "redis://:s3cret@127.0.0.1:6390",
			wantArgs: []string{"-h", "127.0.0.1", "-p", "6390"}, wantEnv: []string{"REDISCLI_AUTH=s3cret"}},
		{name: "acl user and database", url: "redis://alice:pw@db.example:6379/2",
			wantArgs: []string{"-h", "db.example", "-p", "6379", "-n", "2", "--user", "alice"}, wantEnv: []string{"REDISCLI_AUTH=pw"}},
		{name: "tls, default port", url: "rediss://redis.example",
			wantArgs: []string{"-h", "redis.example", "-p", "6379", "--tls"}},
		{name: "unix socket", url: "unix:///run/sett/redis.sock?password=pw&db=1",
			wantArgs: []string{"-s", "/run/sett/redis.sock", "-n", "1"}, wantEnv: []string{"REDISCLI_AUTH=pw"}},
		{name: "the default user is redis-cli's own", url: "redis://default:pw@h:1",
			wantArgs: []string{"-h", "h", "-p", "1"}, wantEnv: []string{"REDISCLI_AUTH=pw"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := redisCLITargetFromURL(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			args, env := target.argv()
			if !slices.Equal(args, tt.wantArgs) || !slices.Equal(env, tt.wantEnv) {
				t.Fatalf("argv = %q, env = %q; want %q, %q", args, env, tt.wantArgs, tt.wantEnv)
			}
			for _, a := range args {
				if target.password != "" && strings.Contains(a, target.password) {
					t.Fatalf("the password is on the command line: %q", args)
				}
			}
		})
	}
	if _, err := redisCLITargetFromURL("http://x"); err == nil || !strings.Contains(err.Error(), "redis://, rediss:// or unix://") {
		t.Errorf("http URL: %v, want an error naming the schemes", err)
	}
}

// TestRedisCLIAnswersPong runs the real redis-cli against a real Redis
// that requires an ACL user and password: named by --redis-url, and by
// sett.yml's services.redis.
func TestRedisCLIAnswersPong(t *testing.T) {
	t.Parallel()
	srv, err := redistest.NewServer(redistest.ServerOptions{Password: "adminpw",
		Extra: []string{"user alice on >alicepw ~* &* +@all"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	e := newTestEnv(t)
	e.env["SETT_REDIS_URL"] = "redis://alice:alicepw@" + srv.Addr
	if out := e.mustRun(t, "redis-cli", "ACL", "WHOAMI"); strings.TrimSpace(out) != "alice" {
		t.Errorf("redis-cli ACL WHOAMI through --redis-url = %q, want alice", out)
	}
	delete(e.env, "SETT_REDIS_URL")
	cfg := "version: \"1.0\"\nagents:\n  a:\n    command: [\"true\"]\nservices:\n  redis:\n    url: redis://" + srv.Addr + "\n    username: alice\n    password: alicepw\n"
	if err := os.WriteFile(filepath.Join(e.app.Dir, "sett.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := e.mustRun(t, "redis-cli", "PING"); strings.TrimSpace(out) != "PONG" {
		t.Errorf("redis-cli PING through sett.yml = %q, want PONG", out)
	}
	// redis-cli's own flags pass through; with -e an error reply fails
	// it, and its exit status comes back.
	if out := e.mustRun(t, "redis-cli", "--no-raw", "-n", "0", "PING"); strings.TrimSpace(out) != "PONG" {
		t.Errorf("redis-cli --no-raw -n 0 PING = %q, want PONG", out)
	}
	out, _, err := e.run(t, "redis-cli", "-e", "GET")
	if code := ExitCode(err); code != 1 {
		t.Errorf("redis-cli -e GET (an error reply): exit %d (%v), want redis-cli's 1\n%s", code, err, out)
	}
	name := e.env["SETT_INSTANCE"]
	delete(e.env, "SETT_INSTANCE")
	if out := e.mustRun(t, "--name", name, "redis-cli", "PING"); strings.TrimSpace(out) != "PONG" {
		t.Errorf("sett --name X redis-cli PING = %q, want PONG", out)
	}
}

// TestRedisCLIFollowsTheSentinel: on a Sentinel set, `sett redis-cli`
// asks the sentinel for the master of the moment and talks to it, with
// the sentinel's own password from the environment; after a failover it
// reaches the promoted replica.
func TestRedisCLIFollowsTheSentinel(t *testing.T) {
	t.Parallel()
	set, err := redistest.NewSentinelSet("data-pw", "sentinel-pw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Stop)
	e := newTestEnv(t)
	delete(e.env, "SETT_REDIS_URL") // the workspace's sett.yml names the Redis
	e.env["SETT_REDIS_SENTINEL_PASSWORD"] = "sentinel-pw"
	cfg := "version: \"1.0\"\nagents:\n  a:\n    command: [\"true\"]\nservices:\n  redis:\n    password: data-pw\n    sentinel:\n      master_name: " +
		set.MasterName + "\n      addresses: [" + set.Sentinel.Addr + "]\n"
	if err := os.WriteFile(filepath.Join(e.app.Dir, "sett.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	portOf := func(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }
	port := func() string {
		out := e.mustRun(t, "redis-cli", "CONFIG", "GET", "port")
		f := strings.Fields(out)
		if len(f) != 2 {
			t.Fatalf("redis-cli CONFIG GET port = %q", out)
		}
		return f[1]
	}
	if got := port(); got != portOf(set.Master.Addr) {
		t.Fatalf("redis-cli reached port %s, want the master's %s", got, portOf(set.Master.Addr))
	}
	if err := set.Master.Kill(); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, time.Minute, "the sentinel to promote the replica", func() bool {
		addr, err := set.MasterAddr(context.Background())
		return err == nil && addr == set.Replica.Addr
	})
	if got := port(); got != portOf(set.Replica.Addr) {
		t.Fatalf("after the failover redis-cli reached port %s, want the promoted replica's %s", got, portOf(set.Replica.Addr))
	}
	e.env["SETT_REDIS_SENTINEL_PASSWORD"] = "wrong"
	if _, _, err := e.run(t, "redis-cli", "PING"); err == nil || !strings.Contains(err.Error(), "SETT_REDIS_SENTINEL_PASSWORD") || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("a wrong sentinel password: %v; want an error with the sentinel's answer, naming SETT_REDIS_SENTINEL_PASSWORD", err)
	}
}
