package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/settdev/sett/internal/eventually"
)

// Blocked returns the client ids (for CLIENT KILL ID) of the connections
// named name (go-redis Options.ClientName) that are blocked in a command.
func Blocked(tb testing.TB, raw *redis.Client, name string) []string {
	tb.Helper()
	list, err := raw.ClientList(tb.Context()).Result()
	if err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for line := range strings.SplitSeq(list, "\n") {
		fields := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			fields[k] = v
		}
		if fields["name"] == name && strings.Contains(fields["flags"], "b") {
			ids = append(ids, fields["id"])
		}
	}
	return ids
}

// WaitBlocked polls until a connection named name is blocked in a
// command and returns its client id. It fails the test after within.
func WaitBlocked(tb testing.TB, raw *redis.Client, name string, within time.Duration) string {
	tb.Helper()
	var ids []string
	if !eventually.Within(within, func() bool { ids = Blocked(tb, raw, name); return len(ids) > 0 }) {
		tb.Fatalf("no connection named %s blocked within %s", name, within)
	}
	return ids[0]
}
