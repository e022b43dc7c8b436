package blackboard_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// Script calls, EVALSHA against FCALL (issues 31 and 34): what Redis
// spends per call on a script run by EVALSHA (lib.lua + the body, as a
// client that cannot use Functions runs it) and by FCALL of the same body
// in the client's Functions library (lib.lua once), with the same keys and
// arguments: the client's own methods make every call, switched with
// UseFunctions. Run it on its own, since it reads the server's statistics:
//
//	go test -run '^$' -bench ScriptCalls -benchtime 1x ./internal/blackboard/
//
// Each script is called scriptCallsPerBlock times per block, in
// scriptCallRounds rounds that alternate which way goes first; the
// figures are the medians over the rounds, per call, from Redis's own
// INFO: commandstats (usec of the evalsha or fcall row ÷ its calls: the
// time inside the script, its commands included) and INFO cpu
// (used_cpu_sys + used_cpu_user over the block ÷ calls: everything the
// server spent, socket I/O and the event loop included). State a call
// needs (the workflow and claim of a bid, the grant of a lease) is made
// before the block, outside the window. The noop row also runs the body
// without lib.lua (bare): evalsha − bare is the prelude's cost.
const (
	scriptCallRounds    = 7
	scriptCallsPerBlock = 300
)

// serverWork is one reading of INFO commandstats and cpu.
type serverWork struct {
	calls, usec map[string]int64
	cpuUsec     int64
}

func readServerWork(tb testing.TB, raw *redis.Client) serverWork {
	tb.Helper()
	text, err := raw.Info(tb.Context(), "commandstats", "cpu").Result()
	if err != nil {
		tb.Fatal(err)
	}
	w := serverWork{calls: map[string]int64{}, usec: map[string]int64{}}
	var cpu float64
	for _, line := range strings.Split(text, "\n") {
		name, value, _ := strings.Cut(strings.TrimSpace(line), ":")
		if name == "used_cpu_sys" || name == "used_cpu_user" {
			v, _ := strconv.ParseFloat(value, 64)
			cpu += v
		}
		cmd, ok := strings.CutPrefix(name, "cmdstat_")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(value, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				w.calls[cmd] = n
			case "usec":
				w.usec[cmd] = n
			}
		}
	}
	w.cpuUsec = int64(math.Round(cpu * 1e6))
	return w
}

// scriptCallCase is one script measured: prepare makes the state for n
// calls, call makes call i (in the call style the hook is set to).
type scriptCallCase struct {
	name    string
	prepare func(b *testing.B, n int)
	call    func(ctx context.Context, i int) error
}

func BenchmarkScriptCalls(b *testing.B) {
	srv, err := redistest.NewServer(redistest.ServerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Stop)
	ctx := b.Context()
	raw := srv.Raw()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: srv.Password})
	b.Cleanup(func() { _ = rdb.Close() })
	c, err := blackboard.New(ctx, rdb, blackboard.Options{Instance: "bench-script-calls"})
	if err != nil {
		b.Fatal(err)
	}
	// The no-op: preluded for EVALSHA, bare (no lib.lua), and in a
	// library of its own.
	load := func(text string) string {
		sha, err := raw.ScriptLoad(ctx, text).Result()
		if err != nil {
			b.Fatal(err)
		}
		return sha
	}
	preluded, err := blackboard.Preluded(blackboard.NoopScript)
	if err != nil {
		b.Fatal(err)
	}
	noopSha, bareSha := load(preluded), load(blackboard.NoopScript)
	noopLib, err := blackboard.NoopLibrary("sett_bench")
	if err != nil {
		b.Fatal(err)
	}
	if err := raw.FunctionLoad(ctx, noopLib).Err(); err != nil {
		b.Fatalf("FUNCTION LOAD: %v", err)
	}
	noopCalls := map[string]func(ctx context.Context) error{
		"evalsha": func(ctx context.Context) error { return rdb.EvalSha(ctx, noopSha, nil).Err() },
		"fcall":   func(ctx context.Context) error { return rdb.FCall(ctx, "sett_bench_noop", nil).Err() },
		"bare":    func(ctx context.Context) error { return rdb.EvalSha(ctx, bareSha, nil).Err() },
	}

	var goals []*blackboard.Artefact
	var claims []*blackboard.Claim
	cases := []scriptCallCase{
		{name: "noop"},
		{name: "beat", call: func(ctx context.Context, i int) error {
			_, err := c.Heartbeat(ctx, blackboard.HeartbeatParams{Agent: "coder", Consumer: "cub-1", TTL: time.Minute})
			return err
		}},
		{name: "create_artefact", prepare: func(b *testing.B, n int) {
			goals = goals[:0]
			for range n {
				goals = append(goals, goal())
			}
		}, call: func(ctx context.Context, i int) error {
			return c.CreateArtefact(ctx, goals[i], blackboard.WriteAuth{})
		}},
		{name: "create_claim", prepare: func(b *testing.B, n int) {
			goals = goals[:0]
			for range n {
				goals = append(goals, startWorkflow(b, c))
			}
		}, call: func(ctx context.Context, i int) error {
			_, err := c.CreateClaim(ctx, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(goals[i], "coder", "tester"), ByArtefact: true})
			return err
		}},
		{name: "submit_bid", prepare: func(b *testing.B, n int) {
			claims = claims[:0]
			for range n {
				g := startWorkflow(b, c)
				claims = append(claims, createClaim(b, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "coder", "tester"), ByArtefact: true}))
			}
		}, call: func(ctx context.Context, i int) error {
			return c.SubmitBid(ctx, claims[i].ID, "coder", blackboard.BidClaim)
		}},
		{name: "take_lease", prepare: func(b *testing.B, n int) {
			claims = claims[:0]
			for range n {
				_, cl := grantedClaim(b, c)
				claims = append(claims, cl)
			}
		}, call: func(ctx context.Context, i int) error {
			return c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: claims[i].ID, Agent: "coder", Token: "1", Holder: "cub-1", TTL: time.Minute})
		}},
	}
	styles := []string{"evalsha", "fcall"}
	for _, sc := range cases {
		b.Run(sc.name, func(b *testing.B) {
			styles := styles
			if sc.name == "noop" {
				styles = append(slices.Clone(styles), "bare")
			}
			usec := map[string][]float64{}
			cpu := map[string][]float64{}
			for round := range scriptCallRounds {
				order := slices.Clone(styles)
				if round%2 == 1 {
					slices.Reverse(order)
				}
				for _, st := range order {
					if sc.prepare != nil {
						sc.prepare(b, scriptCallsPerBlock)
					}
					call := sc.call
					if sc.name == "noop" {
						noop := noopCalls[st]
						call = func(ctx context.Context, _ int) error { return noop(ctx) }
					} else if err := blackboard.UseFunctions(ctx, c, st == "fcall"); err != nil {
						b.Fatal(err)
					}
					command := "evalsha"
					if st == "fcall" {
						command = "fcall"
					}
					before := readServerWork(b, raw)
					for i := range scriptCallsPerBlock {
						if err := call(ctx, i); err != nil {
							b.Fatalf("%s by %s: %v", sc.name, st, err)
						}
					}
					after := readServerWork(b, raw)
					n := after.calls[command] - before.calls[command]
					if n != scriptCallsPerBlock {
						b.Fatalf("%s by %s: Redis counted %d %s calls, want %d", sc.name, st, n, command, scriptCallsPerBlock)
					}
					usec[st] = append(usec[st], float64(after.usec[command]-before.usec[command])/float64(n))
					// The second INFO's own cost is in the window: the
					// same in every block.
					cpu[st] = append(cpu[st], float64(after.cpuUsec-before.cpuUsec)/float64(n))
				}
			}
			var line []string
			for _, st := range styles {
				u, p := median(usec[st]), median(cpu[st])
				b.ReportMetric(u, st+"-us/call")
				b.ReportMetric(p, st+"-cpu-us/call")
				line = append(line, fmt.Sprintf("%s %.2f µs (cpu %.2f)", st, u, p))
			}
			b.Logf("%s, medians of %d rounds × %d calls: %s", sc.name, scriptCallRounds, scriptCallsPerBlock, strings.Join(line, ", "))
		})
	}
}

// median of xs (xs is sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}
