package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/settdev/sett/internal/daemon/cubd"
	"github.com/settdev/sett/internal/daemon/orchestratord"
	"github.com/settdev/sett/internal/daemonproc"
	"github.com/settdev/sett/internal/redistest"
)

// The in-process benchmarks run the orchestrator and the cubs inside the
// test process — through internal/daemon/orchestratord and cubd, exactly
// as the binaries do — so that Go's profilers see them:
//
//	go test -run '^$' -bench InProcess -benchtime 2000x -cpuprofile /tmp/cpu.out ./bench/
//	go tool pprof -top -cum /tmp/cpu.out
//
// The no-op tools still run as processes. Timings here are not the
// figures of `make bench` (one process, the profiler on); use them to see
// where CPU goes.

func BenchmarkInProcessHop(b *testing.B)        { benchInProcess(b, 1, false) }
func BenchmarkInProcessHop5Agents(b *testing.B) { benchInProcess(b, 5, false) }
func BenchmarkInProcessThroughput(b *testing.B) { benchInProcess(b, 1, true) }

// benchInProcess runs b.N goals on an in-process stack of `agents` noop
// agents: one after the other, or all at once (concurrent).
func benchInProcess(b *testing.B, agents int, concurrent bool) {
	if testing.Short() {
		b.Skip("runs the daemons against redis-server (run without -short)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root, err := daemonproc.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	bins, err := buildBinaries(ctx, root, filepath.Join(dir, "bin"))
	if err != nil {
		b.Fatal(err)
	}
	redisSrv, err := startRedisServer(ctx, filepath.Join(dir, "redis"), true)
	if err != nil {
		b.Fatal(err)
	}
	defer redisSrv.Shutdown()
	maxConcurrent := 0
	if concurrent {
		maxConcurrent = 8
	}
	sp := stackSpec{name: "in-process", agents: noopAgents(agents, maxConcurrent)}
	config := filepath.Join(dir, "sett.yml")
	if err := os.WriteFile(config, []byte(sp.yaml(bins.Noop)), 0o644); err != nil {
		b.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "daemons.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logs.Close()
	s := &stack{Name: sp.name, Instance: "bench-in-process", Dir: dir, Redis: redisSrv}
	common := []string{"--config", config, "--instance", s.Instance, "--redis-url", redisSrv.URL(), "--log-format", "json"}
	var wg sync.WaitGroup
	// start runs a daemon on a goroutine and waits until it is ready.
	start := func(name string, run func(context.Context, []string, *os.File) error, args ...string) {
		port, err := redistest.FreePort()
		if err != nil {
			b.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx, append(append([]string{"--http-addr", addr}, common...), args...), logs); err != nil && ctx.Err() == nil {
				b.Errorf("%s: %v", name, err)
			}
		}()
		if err := daemonproc.WaitAddrReady(ctx, addr, 30*time.Second); err != nil {
			b.Fatalf("%s: %v (log %s)", name, err, logs.Name())
		}
	}
	runCub := func(ctx context.Context, args []string, out *os.File) error { return cubd.Run(ctx, args, out) }
	runOrch := func(ctx context.Context, args []string, out *os.File) error {
		return orchestratord.Run(ctx, args, out)
	}
	for _, a := range sp.agents {
		start("cub-"+a.name, runCub, "--agent", a.name, "--workspace", dir, "--consumer", a.name)
	}
	start("orchestrator", runOrch, "--id", "in-process")
	if err := s.connect(ctx); err != nil {
		b.Fatal(err)
	}
	defer s.Raw.Close()
	if s.Watcher, err = startEventWatcher(ctx, redisSrv.URL(), s.Instance, s.Counter); err != nil {
		b.Fatal(err)
	}
	defer s.Watcher.Close()
	for i := 0; i < 10; i++ { // warm-up
		if _, _, _, err := s.RunGoal(ctx, "warm-up"); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	if concurrent {
		ids := make([]string, b.N)
		for i := range ids {
			if ids[i], _, err = s.PostGoal(ctx, fmt.Sprintf("goal %d", i)); err != nil {
				b.Fatal(err)
			}
		}
		for _, id := range ids {
			if _, err := s.WaitCompleted(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		for i := 0; i < b.N; i++ {
			if _, _, _, err := s.RunGoal(ctx, fmt.Sprintf("goal %d", i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "claims/s")
	cancel()
	wg.Wait()
}
