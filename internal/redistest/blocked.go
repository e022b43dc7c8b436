package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// WaitBlocked polls CLIENT LIST until a connection named name (go-redis
// Options.ClientName) is blocked in a command, and returns its client id
// (for CLIENT KILL ID). It fails the test after within.
func WaitBlocked(tb testing.TB, raw *redis.Client, name string, within time.Duration) string {
	tb.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		list, err := raw.ClientList(tb.Context()).Result()
		if err != nil {
			tb.Fatal(err)
		}
		for line := range strings.SplitSeq(list, "\n") {
			fields := map[string]string{}
			for _, kv := range strings.Fields(line) {
				k, v, _ := strings.Cut(kv, "=")
				fields[k] = v
			}
			if fields["name"] == name && strings.Contains(fields["flags"], "b") {
				return fields["id"]
			}
		}
		select {
		case <-deadline.C:
			tb.Fatalf("no connection named %s blocked within %s", name, within)
		case <-tick.C:
		}
	}
}
