package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisTimeLogLen is how many slow-log entries a profiled round may leave:
// ≈ 40 top-level commands per claim, 200 claims, with room to spare.
const redisTimeLogLen = 50000

// startRedisTimeLog makes Redis log every command with its execution time
// (SLOWLOG with a 0 µs threshold), from an empty log. The logged time is
// wall time: under the throughput load Redis is often descheduled in the
// middle of a script, so compare rows with each other, not with CPU. The log costs Redis
// a little per command: only an extra, unmeasured round runs with it.
func startRedisTimeLog(ctx context.Context, rdb *redis.Client) error {
	if err := rdb.ConfigSet(ctx, "slowlog-max-len", fmt.Sprint(redisTimeLogLen)).Err(); err != nil {
		return fmt.Errorf("bench: CONFIG SET slowlog-max-len: %w", err)
	}
	if err := rdb.SlowLogReset(ctx).Err(); err != nil {
		return fmt.Errorf("bench: SLOWLOG RESET: %w", err)
	}
	if err := rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		return fmt.Errorf("bench: CONFIG SET slowlog-log-slower-than: %w", err)
	}
	return nil
}

// redisTimeBreakdown stops the command log and sums its entries by command
// (scripts by name): Redis' own execution time per claim, the time inside
// its event loop that a command holds the server (socket reads and writes
// are not in it). Commands run by scripts are logged too, so rows overlap
// and are not summed. The harness's goal writes and reads are included.
func redisTimeBreakdown(ctx context.Context, rdb *redis.Client, scriptNames map[string]string, claims int) (Breakdown, error) {
	if err := rdb.ConfigSet(ctx, "slowlog-log-slower-than", "10000").Err(); err != nil {
		return Breakdown{}, fmt.Errorf("bench: CONFIG SET slowlog-log-slower-than: %w", err)
	}
	entries, err := rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return Breakdown{}, fmt.Errorf("bench: SLOWLOG GET: %w", err)
	}
	type sum struct {
		calls int
		time  time.Duration
	}
	sums := map[string]*sum{}
	for _, e := range entries {
		if len(e.Args) == 0 || harnessCommand(e.Args[0]) {
			continue
		}
		name := commandLabel(e.Args, scriptNames)
		s := sums[name]
		if s == nil {
			s = &sum{}
			sums[name] = s
		}
		s.calls++
		s.time += e.Duration
	}
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return sums[names[i]].time > sums[names[j]].time })
	perClaim := func(d time.Duration) string { return formatValue(float64(d.Microseconds()) / float64(claims)) }
	b := Breakdown{Name: "throughput_redis_time",
		Title:   fmt.Sprintf("Redis execution time per claim by command, one extra round of %d claims with SLOWLOG at 0 µs (wall time inside Redis, which on a loaded machine includes waiting for a CPU; socket I/O not included; a script's time includes the commands it runs, which also have their own rows)", claims),
		Columns: []string{"COMMAND (scripts by name)", "CALLS PER CLAIM", "µs PER CLAIM", "µs PER CALL"}}
	for _, n := range names {
		s := sums[n]
		b.Rows = append(b.Rows, []string{n, formatValue(float64(s.calls) / float64(claims)), perClaim(s.time),
			formatValue(float64(s.time.Microseconds()) / float64(s.calls))})
	}
	if len(entries) >= redisTimeLogLen {
		b.Rows = append(b.Rows, []string{"(the log was full: later commands are missing)", "", "", ""})
	}
	return b, nil
}

// harnessCommand reports the harness's own diagnostics, left out.
func harnessCommand(cmd string) bool {
	switch strings.ToLower(cmd) {
	case "config", "slowlog", "info":
		return true
	}
	return false
}
