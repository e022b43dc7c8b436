// Command asynq-bench measures asynq (github.com/hibiken/asynq), the Redis
// job queue a Go user would reach for to dispatch work, against a Redis
// that sett-bench started the way it starts Sett's: enqueue → handler
// start latency and tasks/s with a no-op handler, and Redis' CPU per
// task. It is a module of its own so that asynq never enters Sett's
// go.mod; sett-bench runs it (`go run .` in this directory) and reads the
// JSON it prints on stdout.
//
// What one task is here: asynq.Client.Enqueue (one Lua script: the task
// hash, a list push) and, in the server, a dequeue script (move to the
// active list, lease), the handler, and a done script. No bidding, no
// phases, no versions, no audit events — what a Sett claim does on top
// (see bench/README.md).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Result is what the command prints, as JSON.
type Result struct {
	// LatencyMs are enqueue returned → handler start, sequential tasks,
	// the server polling every PollInterval when its queue is empty.
	LatencyMs    []float64 `json:"latency_ms"`
	PollInterval string    `json:"poll_interval"`
	// DefaultLatencyMs are the same with asynq's default configuration
	// (a 1 s poll interval), fewer samples.
	DefaultLatencyMs []float64 `json:"default_latency_ms"`
	// TasksPerSec are rounds of Tasks tasks enqueued by 16 goroutines,
	// handled with Concurrency workers: tasks ÷ (first enqueue → last
	// handler returned).
	TasksPerSec []float64 `json:"tasks_per_sec"`
	Tasks       int       `json:"tasks"`
	Concurrency int       `json:"concurrency"`
	// RedisCPUPerTaskUs is Redis' CPU (INFO cpu) per task over the
	// throughput rounds, µs; IdleRedisCPUPct Redis' CPU while the tuned
	// server waits with an empty queue, % of a core.
	RedisCPUPerTaskUs float64 `json:"redis_cpu_per_task_us"`
	IdleRedisCPUPct   float64 `json:"idle_redis_cpu_pct"`
	CommandsPerTask   float64 `json:"commands_per_task"`
}

func main() {
	network := flag.String("network", "unix", "tcp or unix")
	addr := flag.String("addr", "", "Redis address (host:port, or the socket path)")
	password := flag.String("password", "", "Redis password")
	samples := flag.Int("samples", 300, "sequential tasks timed with the tuned poll interval")
	defaultSamples := flag.Int("default-samples", 8, "sequential tasks timed with asynq's default configuration (about 1 s each)")
	tasks := flag.Int("tasks", 200, "tasks per throughput round")
	rounds := flag.Int("rounds", 6, "throughput rounds")
	concurrency := flag.Int("concurrency", 8, "handlers at once (Sett's throughput agent has max_concurrent 8)")
	poll := flag.Duration("poll", time.Millisecond, "TaskCheckInterval of the tuned server")
	flag.Parse()
	if *addr == "" {
		fmt.Fprintln(os.Stderr, "asynq-bench: -addr is required (the Redis address or socket path sett-bench started)")
		os.Exit(2)
	}
	opt := asynq.RedisClientOpt{Network: *network, Addr: *addr, Password: *password}
	ctx := context.Background()
	res, err := run(ctx, opt, *samples, *defaultSamples, *tasks, *rounds, *concurrency, *poll)
	if err != nil {
		fmt.Fprintln(os.Stderr, "asynq-bench:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

// starts carries the handler's start time of each task, by its id.
type starts struct {
	mu sync.Mutex
	at map[string]chan time.Time
}

func (s *starts) wait(id string) chan time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.at[id]
	if !ok {
		ch = make(chan time.Time, 1)
		s.at[id] = ch
	}
	return ch
}

func run(ctx context.Context, opt asynq.RedisClientOpt, samples, defaultSamples, tasks, rounds, concurrency int, poll time.Duration) (Result, error) {
	res := Result{PollInterval: poll.String(), Tasks: tasks, Concurrency: concurrency}
	rdb := redis.NewClient(&redis.Options{Network: opt.Network, Addr: opt.Addr, Password: opt.Password})
	defer rdb.Close()
	client := asynq.NewClient(opt)
	defer client.Close()

	st := &starts{at: map[string]chan time.Time{}}
	var done atomic.Int64
	mux := asynq.NewServeMux()
	mux.HandleFunc("noop", func(ctx context.Context, t *asynq.Task) error {
		now := time.Now() // first statement: the handler started
		id, _ := asynq.GetTaskID(ctx)
		st.wait(id) <- now
		done.Add(1)
		return nil
	})
	serve := func(cfg asynq.Config) (*asynq.Server, error) {
		cfg.Concurrency = concurrency
		cfg.LogLevel = asynq.ErrorLevel
		srv := asynq.NewServer(opt, cfg)
		return srv, srv.Start(mux)
	}
	latency := func(n int) ([]float64, error) {
		var out []float64
		for i := 0; i < n; i++ {
			info, err := client.EnqueueContext(ctx, asynq.NewTask("noop", nil), asynq.MaxRetry(0))
			enqueued := time.Now()
			if err != nil {
				return nil, fmt.Errorf("enqueue: %w", err)
			}
			select {
			case at := <-st.wait(info.ID):
				out = append(out, float64(at.Sub(enqueued))/1e6)
			case <-time.After(30 * time.Second):
				return nil, fmt.Errorf("task %s did not start within 30s", info.ID)
			}
		}
		return out, nil
	}

	// asynq's defaults: the latency a user gets without tuning.
	srv, err := serve(asynq.Config{})
	if err != nil {
		return res, err
	}
	if res.DefaultLatencyMs, err = latency(defaultSamples); err != nil {
		return res, err
	}
	srv.Shutdown()

	// Tuned for latency: the empty queue polled every poll.
	if srv, err = serve(asynq.Config{TaskCheckInterval: poll}); err != nil {
		return res, err
	}
	defer srv.Shutdown()
	if _, err := latency(10); err != nil { // warm-up
		return res, err
	}
	if res.LatencyMs, err = latency(samples); err != nil {
		return res, err
	}
	// What the polling costs Redis while nothing happens.
	c0, err := redisCPU(ctx, rdb)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	time.Sleep(2 * time.Second) // an observation window, not a wait for something
	c1, err := redisCPU(ctx, rdb)
	if err != nil {
		return res, err
	}
	res.IdleRedisCPUPct = (c1.cpu - c0.cpu) / time.Since(t0).Seconds() * 100

	// Throughput rounds.
	s0, err := redisCPU(ctx, rdb)
	if err != nil {
		return res, err
	}
	total := 0
	for r := 0; r < rounds; r++ {
		base := done.Load()
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < tasks; i += 16 {
					if _, err := client.EnqueueContext(ctx, asynq.NewTask("noop", []byte(strconv.Itoa(i))), asynq.MaxRetry(0)); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return res, fmt.Errorf("enqueue: %w", err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for done.Load()-base < int64(tasks) {
			if time.Now().After(deadline) {
				return res, fmt.Errorf("%d of %d tasks handled after 60s", done.Load()-base, tasks)
			}
			time.Sleep(200 * time.Microsecond) // polling a counter, with a deadline
		}
		res.TasksPerSec = append(res.TasksPerSec, float64(tasks)/time.Since(start).Seconds())
		total += tasks
	}
	s1, err := redisCPU(ctx, rdb)
	if err != nil {
		return res, err
	}
	res.RedisCPUPerTaskUs = (s1.cpu - s0.cpu) * 1e6 / float64(total)
	res.CommandsPerTask = float64(s1.commands-s0.commands) / float64(total)
	return res, nil
}

type cpuReading struct {
	cpu      float64 // seconds
	commands int64
}

// redisCPU reads used_cpu_sys + used_cpu_user and total_commands_processed.
func redisCPU(ctx context.Context, rdb *redis.Client) (cpuReading, error) {
	text, err := rdb.Info(ctx, "cpu", "stats").Result()
	if err != nil {
		return cpuReading{}, fmt.Errorf("INFO: %w", err)
	}
	var r cpuReading
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "used_cpu_sys", "used_cpu_user":
			f, _ := strconv.ParseFloat(v, 64)
			r.cpu += f
		case "total_commands_processed":
			r.commands, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return r, nil
}
