package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// asynqResult is what bench/asynq prints (its Result).
type asynqResult struct {
	LatencyMs         []float64 `json:"latency_ms"`
	PollInterval      string    `json:"poll_interval"`
	DefaultLatencyMs  []float64 `json:"default_latency_ms"`
	TasksPerSec       []float64 `json:"tasks_per_sec"`
	Tasks             int       `json:"tasks"`
	Concurrency       int       `json:"concurrency"`
	RedisCPUPerTaskUs float64   `json:"redis_cpu_per_task_us"`
	IdleRedisCPUPct   float64   `json:"idle_redis_cpu_pct"`
	CommandsPerTask   float64   `json:"commands_per_task"`
}

// asynqSideBySide runs bench/asynq — a module of its own, so that asynq
// never enters Sett's go.mod — against a redis-server started as every
// stack's is (append-only, everysec, reached over its Unix socket), and
// adds its figures. The ratios to Sett's are notes added at the end of
// the run (asynqRatios), when both sides were measured.
func (r *runner) asynqSideBySide(ctx context.Context) error {
	dir := filepath.Join(r.workDir, "asynq")
	srv, err := startRedisServer(ctx, filepath.Join(dir, "redis"), true)
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	o := r.opts
	cmd := exec.CommandContext(ctx, "go", "run", ".",
		"-network", "unix", "-addr", socketPath(srv.Dir()), "-password", srv.Password,
		"-samples", strconv.Itoa(o.AsynqSamples), "-default-samples", strconv.Itoa(o.AsynqDefaultSamples),
		"-tasks", strconv.Itoa(o.ThroughputGoals), "-rounds", strconv.Itoa(o.ThroughputRounds),
		"-concurrency", strconv.Itoa(o.ThroughputMaxConcurrent))
	cmd.Dir = filepath.Join(r.root, "bench", "asynq")
	// Its own module (its go.sum pins asynq), outside any workspace.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bench: bench/asynq: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var res asynqResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return fmt.Errorf("bench: bench/asynq printed %q: %w", stdout.String(), err)
	}
	f := NewFigure("asynq_enqueue_to_handler", "asynq: enqueue → handler start, poll "+res.PollInterval, "ms", "tasks", res.LatencyMs, "")
	f.Note = fmt.Sprintf("github.com/hibiken/asynq v0.26 against a redis-server configured like a stack's, over its Unix socket: Enqueue returned → "+
		"no-op handler's first statement, sequential tasks, server TaskCheckInterval %s (asynq polls an empty queue; it has no blocking pop) "+
		"and Concurrency %d; that polling costs Redis %.1f %% of a core while idle", res.PollInterval, res.Concurrency, res.IdleRedisCPUPct)
	r.add(f)
	f = NewFigure("asynq_enqueue_to_handler_default", "asynq: enqueue → handler start, default config", "ms", "tasks", res.DefaultLatencyMs, "")
	f.Note = "the same with asynq's defaults (TaskCheckInterval 1 s: an idle server looks for work every 0.5–1.5 s)"
	r.add(f)
	f = NewFigure("asynq_throughput", fmt.Sprintf("asynq: throughput, %d concurrent tasks", res.Tasks), "tasks/s",
		fmt.Sprintf("rounds (%d tasks)", res.Tasks), res.TasksPerSec, "")
	f.Note = fmt.Sprintf("per round: %d tasks enqueued by 16 goroutines, no-op handler, Concurrency %d (as the throughput agent's max_concurrent): "+
		"tasks ÷ (first enqueue → last handler returned); Redis executed %.1f commands per task", res.Tasks, res.Concurrency, res.CommandsPerTask)
	r.add(f)
	f = NewFigure("asynq_redis_cpu_per_task", "asynq: Redis CPU per task", "µs", "throughput rounds", []float64{res.RedisCPUPerTaskUs}, "")
	f.Note = "INFO cpu delta over the throughput rounds ÷ tasks (enqueue, dequeue, done)"
	r.add(f)
	return nil
}

// asynqRatios adds Sett-to-asynq ratios to the table when both sides were
// measured in the run. A Sett claim also bids, grants, leases, versions
// its output, writes audit events and completes its workflow, and it
// starts a process (the tool) where asynq calls a function; an asynq
// task is enqueued, dequeued and marked done.
func (r *runner) asynqRatios() {
	type pair struct{ name, sett, asynq, title string }
	for _, p := range []pair{
		{"ratio_asynq_latency", "hop_1_agent", "asynq_enqueue_to_handler", "Sett / asynq: goal → tool main() ÷ enqueue → handler (1 ms poll), p50"},
		{"ratio_asynq_latency_default", "hop_1_agent", "asynq_enqueue_to_handler_default", "Sett / asynq: goal → tool main() ÷ enqueue → handler (defaults), p50"},
		{"ratio_asynq_throughput", "throughput_200_goals", "asynq_throughput", "Sett / asynq: claims/s ÷ tasks/s, medians"},
		{"ratio_asynq_redis_cpu", "redis_cpu_per_claim_1_agent", "asynq_redis_cpu_per_task", "Sett / asynq: Redis CPU per claim ÷ per task, p50"},
	} {
		s, ok1 := r.figures[p.sett]
		a, ok2 := r.figures[p.asynq]
		if ok1 && ok2 && a.P50 != 0 {
			f := NewFigure(p.name, p.title, "×", "ratio", []float64{s.P50 / a.P50}, "")
			f.Note = fmt.Sprintf("%s p50 %s ÷ %s p50 %s, measured in the same run", p.sett, formatValue(s.P50), p.asynq, formatValue(a.P50))
			r.add(f)
		}
	}
}
