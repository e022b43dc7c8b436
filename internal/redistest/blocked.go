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

// CutBlocked kills every connection named name that is blocked in a
// command, so that the read each one waits in fails on the client's side
// (go-redis then retries it on a new connection). It returns how many it
// cut.
func CutBlocked(tb testing.TB, raw *redis.Client, name string) int {
	tb.Helper()
	ids := Blocked(tb, raw, name)
	for _, id := range ids {
		if err := raw.ClientKillByFilter(tb.Context(), "ID", id).Err(); err != nil {
			tb.Fatal(err)
		}
	}
	return len(ids)
}

// DeliverUnseen adds an entry with values to stream and delivers it to
// consumer of group inside one MULTI, so that no reader blocked on the
// group is served it: the entry is in the consumer's pending list as if a
// read had delivered it and its reply had been lost.
func DeliverUnseen(tb testing.TB, raw *redis.Client, stream, group, consumer string, values map[string]any) {
	tb.Helper()
	ctx := tb.Context()
	if _, err := raw.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: values})
		p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: consumer, Streams: []string{stream, ">"}, Count: 1, Block: -1})
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
}
