package bench

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// redisStats is Redis' own count of the work it did (INFO stats and INFO
// commandstats). Commands that Lua scripts run are counted like commands
// from clients, under their own names.
type redisStats struct {
	// Commands is total_commands_processed (script-internal commands
	// included).
	Commands int64
	// Reads is total_reads_processed: read events on client sockets. A
	// request that arrives in one segment (every request here) is one
	// read, so the difference of two snapshots estimates round trips.
	Reads int64
	// Calls is calls per command (cmdstat_<name>).
	Calls map[string]int64
	// Usec is Redis' own execution time per command (cmdstat_<name>
	// usec=), in µs: a script's includes the commands it runs, which have
	// their own rows too.
	Usec map[string]int64
	// CPU is used_cpu_sys + used_cpu_user of the main thread and its
	// helpers (INFO cpu), in µs: everything the server spent, socket I/O
	// and event loop included.
	CPU int64
}

// Sub returns s - prev.
func (s redisStats) Sub(prev redisStats) redisStats {
	d := redisStats{Commands: s.Commands - prev.Commands, Reads: s.Reads - prev.Reads, CPU: s.CPU - prev.CPU,
		Calls: map[string]int64{}, Usec: map[string]int64{}}
	for k, v := range s.Calls {
		if n := v - prev.Calls[k]; n != 0 {
			d.Calls[k] = n
		}
	}
	for k, v := range s.Usec {
		if n := v - prev.Usec[k]; n != 0 {
			d.Usec[k] = n
		}
	}
	return d
}

// readRedisStats takes one snapshot with a single INFO command.
//
// The harness reads INFO with go-redis directly: it is an operator's
// diagnostic, not blackboard data, so it has no place in internal/blackboard.
func readRedisStats(ctx context.Context, rdb *redis.Client) (redisStats, error) {
	text, err := rdb.Info(ctx, "stats", "commandstats", "cpu").Result()
	if err != nil {
		return redisStats{}, fmt.Errorf("bench: INFO: %w", err)
	}
	return parseRedisStats(text), nil
}

func parseRedisStats(text string) redisStats {
	s := redisStats{Calls: map[string]int64{}, Usec: map[string]int64{}}
	var cpu float64
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case name == "total_commands_processed":
			s.Commands, _ = strconv.ParseInt(value, 10, 64)
		case name == "total_reads_processed":
			s.Reads, _ = strconv.ParseInt(value, 10, 64)
		case name == "used_cpu_sys" || name == "used_cpu_user":
			// Seconds with 6 decimals (getrusage of the whole process).
			v, _ := strconv.ParseFloat(value, 64)
			cpu += v
		case strings.HasPrefix(name, "cmdstat_"):
			cmd := strings.TrimPrefix(name, "cmdstat_")
			for _, kv := range strings.Split(value, ",") {
				if n, ok := strings.CutPrefix(kv, "calls="); ok {
					s.Calls[cmd], _ = strconv.ParseInt(n, 10, 64)
				}
				if n, ok := strings.CutPrefix(kv, "usec="); ok {
					s.Usec[cmd], _ = strconv.ParseInt(n, 10, 64)
				}
			}
		}
	}
	s.CPU = int64(math.Round(cpu * 1e6))
	return s
}

// clientCounter is a go-redis hook that counts the harness's own round
// trips (a command, or a whole pipeline) and commands, so that they can be
// told apart from the daemons' in Redis' totals.
type clientCounter struct {
	roundTrips atomic.Int64
	commands   atomic.Int64
}

func (h *clientCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *clientCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.roundTrips.Add(1)
		h.commands.Add(1)
		return next(ctx, cmd)
	}
}

func (h *clientCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.roundTrips.Add(1)
		h.commands.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
