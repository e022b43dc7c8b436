package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The floor of a claim's Redis CPU: the commands a claim makes Redis
// execute (INFO commandstats per claim, script-internal ones included),
// replayed as plain commands from a client, in as many round trips as the
// daemons use per claim, with representative arguments. What Sett's
// scripts cost above it is the price of running them as scripts
// (EVALSHA dispatch, the Lua interpreter, argument marshalling, cjson);
// what the floor itself costs is the price of the data model.

// floorKeys is the prefix of the replay's keys; floorPayload a 200-byte
// field value, about the size of a claim's or an artefact's fields.
const floorKeys = "bench-floor:"

var floorPayload = strings.Repeat("x", 200)

// floorProgram is one claim's commands as round trips: each inner slice
// is sent as one pipeline.
type floorProgram [][][]any

// floorCommand returns a representative invocation of a command that a
// claim runs (i numbers the claim, so writes go to fresh keys as a
// claim's do), and false for a command the replay does not know (it is
// listed in the note instead).
func floorCommand(name string, i int) ([]any, bool) {
	k := func(kind string) string { return floorKeys + kind + ":" + strconv.Itoa(i) }
	h := floorKeys + "hash" // a 16-field hash seeded before the replay
	z := floorKeys + "zset"
	st := floorKeys + "stream"
	switch name {
	case "hset":
		return []any{"HSET", k("h"), "status", "pending", "artefact_id", strconv.Itoa(i), "payload", floorPayload, "ts", i}, true
	case "hsetnx":
		return []any{"HSETNX", k("h"), "owner", "agent"}, true
	case "hget":
		return []any{"HGET", h, "f3"}, true
	case "hmget":
		return []any{"HMGET", h, "f1", "f2", "f3", "f4"}, true
	case "hgetall":
		return []any{"HGETALL", h}, true
	case "hincrby":
		return []any{"HINCRBY", k("h"), "count", 1}, true
	case "hdel":
		return []any{"HDEL", k("h"), "nothing"}, true
	case "hexists":
		return []any{"HEXISTS", h, "f5"}, true
	case "zadd":
		return []any{"ZADD", z, i, "member-" + strconv.Itoa(i)}, true
	case "zrem":
		return []any{"ZREM", z, "member-" + strconv.Itoa(i-50)}, true
	case "zcard":
		return []any{"ZCARD", z}, true
	case "zscore":
		return []any{"ZSCORE", z, "member-" + strconv.Itoa(i)}, true
	case "zrank":
		return []any{"ZRANK", z, "member-" + strconv.Itoa(i)}, true
	case "zcount":
		return []any{"ZCOUNT", z, "-inf", "+inf"}, true
	case "zrange":
		return []any{"ZRANGE", z, 0, 9}, true
	case "zrevrange":
		return []any{"ZREVRANGE", z, 0, 9}, true
	case "zrangebyscore":
		return []any{"ZRANGEBYSCORE", z, "-inf", i, "LIMIT", 0, 10}, true
	case "zrangebylex":
		return []any{"ZRANGEBYLEX", z, "[member-1", "+", "LIMIT", 0, 10}, true
	case "zremrangebyscore":
		return []any{"ZREMRANGEBYSCORE", z, "-inf", -1}, true
	case "sadd":
		return []any{"SADD", floorKeys + "set", strconv.Itoa(i)}, true
	case "srem":
		return []any{"SREM", floorKeys + "set", strconv.Itoa(i - 50)}, true
	case "sismember":
		return []any{"SISMEMBER", floorKeys + "set", strconv.Itoa(i)}, true
	case "scard":
		return []any{"SCARD", floorKeys + "set"}, true
	case "smembers":
		return []any{"SMEMBERS", floorKeys + "small-set"}, true
	case "get":
		return []any{"GET", floorKeys + "string"}, true
	case "set":
		return []any{"SET", k("s"), "value", "PX", 60000}, true
	case "exists":
		return []any{"EXISTS", h}, true
	case "del", "unlink":
		return []any{strings.ToUpper(name), k("gone")}, true
	case "pexpire", "expire":
		return []any{"PEXPIRE", k("h"), 60000}, true
	case "incr":
		return []any{"INCR", floorKeys + "counter"}, true
	case "time":
		return []any{"TIME"}, true
	case "publish":
		return []any{"PUBLISH", floorKeys + "channel", "wake"}, true
	case "xadd":
		return []any{"XADD", st, "MAXLEN", "~", 100000, "*", "type", "claim_created", "workflow_id", strconv.Itoa(i),
			"claim_id", strconv.Itoa(i), "artefact_id", strconv.Itoa(i), "agent", "noop-1"}, true
	case "xreadgroup":
		return []any{"XREADGROUP", "GROUP", "g", "c", "COUNT", 10, "STREAMS", st, ">"}, true
	case "xack":
		return []any{"XACK", st, "g", "0-1"}, true
	case "xdel":
		return []any{"XDEL", st, "0-1"}, true
	case "xautoclaim":
		return []any{"XAUTOCLAIM", st, "g", "c", 60000, "0-0", "COUNT", 10}, true
	case "xlen":
		return []any{"XLEN", st}, true
	case "ping":
		return []any{"PING"}, true
	}
	return nil, false
}

// buildFloorPrograms spreads perClaim (calls per claim of each command)
// over claims claims, each cut into roundTrips pipelines, and returns
// the commands it cannot replay.
func buildFloorPrograms(perClaim map[string]float64, claims, roundTrips int) ([]floorProgram, []string) {
	names := make([]string, 0, len(perClaim))
	var unknown []string
	for n := range perClaim {
		if n == "evalsha" || n == "eval" || n == "evalsha_ro" || n == "fcall" || n == "fcall_ro" {
			continue // the scripts themselves: their commands are the rows
		}
		if _, ok := floorCommand(n, 0); !ok {
			unknown = append(unknown, n)
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	sort.Strings(unknown)
	roundTrips = max(roundTrips, 1)
	programs := make([]floorProgram, claims)
	for i := range programs {
		var cmds [][]any
		for _, n := range names {
			k := perClaim[n]
			// Whole calls for this claim, so that claims calls add up to
			// claims × k.
			c := int(math.Floor(float64(i+1)*k)) - int(math.Floor(float64(i)*k))
			for j := 0; j < c; j++ {
				cmd, _ := floorCommand(n, i)
				cmds = append(cmds, cmd)
			}
		}
		// Interleave kinds as a claim does, then cut into round trips.
		p := make(floorProgram, roundTrips)
		for j, cmd := range cmds {
			p[j%roundTrips] = append(p[j%roundTrips], cmd)
		}
		programs[i] = p
	}
	return programs, unknown
}

// runFloor seeds the keys the replay reads, then sends the programs and
// returns Redis' CPU per claim (µs), less the two INFOs'.
func runFloor(ctx context.Context, rdb *redis.Client, programs []floorProgram) (float64, error) {
	seed := rdb.Pipeline()
	fields := []any{}
	for f := 0; f < 16; f++ {
		fields = append(fields, "f"+strconv.Itoa(f), floorPayload[:40])
	}
	seed.HSet(ctx, floorKeys+"hash", fields...)
	seed.SAdd(ctx, floorKeys+"small-set", "a", "b", "c")
	seed.Set(ctx, floorKeys+"string", floorPayload, 0)
	seed.XGroupCreateMkStream(ctx, floorKeys+"stream", "g", "$")
	if _, err := seed.Exec(ctx); err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return 0, fmt.Errorf("bench: floor seed: %w", err)
	}
	st0, err := readRedisStats(ctx, rdb)
	if err != nil {
		return 0, err
	}
	for _, p := range programs {
		for _, rt := range p {
			if len(rt) == 0 {
				continue
			}
			pipe := rdb.Pipeline()
			for _, cmd := range rt {
				pipe.Do(ctx, cmd...)
			}
			if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
				return 0, fmt.Errorf("bench: floor replay: %w", err)
			}
		}
	}
	st1, err := readRedisStats(ctx, rdb)
	if err != nil {
		return 0, err
	}
	// Clean up so that a later batch starts from the same state.
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(ctx, cursor, floorKeys+"*", 1000).Result()
		if err != nil {
			return 0, fmt.Errorf("bench: floor cleanup: %w", err)
		}
		if len(keys) > 0 {
			if err := rdb.Unlink(ctx, keys...).Err(); err != nil {
				return 0, fmt.Errorf("bench: floor cleanup: %w", err)
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	return float64(st1.CPU-st0.CPU) / float64(len(programs)), nil
}
