package local_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/instance"
)

// checkComponentsOnOwnUsers asserts that the Redis the runtime started has
// a connection from each role's own ACL user ("orchestrator",
// "cub-<agent>"), so no daemon runs on the default user, and that the
// daemons come over the instance's Unix socket when its path fits in a
// socket address (flag U in CLIENT LIST), over loopback TCP otherwise.
func checkComponentsOnOwnUsers(t *testing.T, rec *instance.Record, roles ...string) {
	t.Helper()
	opts, err := redis.ParseURL(rec.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	list, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	wantSocket := len(filepath.Join(rec.StateDir, "redis.sock")) <= 107
	t.Logf("state dir %s: daemons over the Unix socket: %v", rec.StateDir, wantSocket)
	for _, role := range roles {
		want := " user=sett-" + rec.Name + "-" + role + " "
		if !strings.Contains(list, want) {
			t.Errorf("no connection with%s in CLIENT LIST:\n%s", want, list)
			continue
		}
		for _, line := range strings.Split(list, "\n") {
			if !strings.Contains(line, want) {
				continue
			}
			if onSocket := unixClient(line); onSocket != wantSocket {
				t.Errorf("%s: over the Unix socket = %v, want %v (state dir %s):\n%s", role, onSocket, wantSocket, rec.StateDir, line)
			}
		}
	}
}

// unixClient reports whether a CLIENT LIST line has the flag U (connected
// through a Unix socket).
func unixClient(line string) bool {
	for _, f := range strings.Fields(line) {
		if flags, ok := strings.CutPrefix(f, "flags="); ok {
			return strings.Contains(flags, "U")
		}
	}
	return false
}
