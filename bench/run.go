package bench

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// runner holds what the scenarios of one run share.
type runner struct {
	opts    Options
	root    string
	workDir string
	bins    Binaries
	// scriptNames maps the digest of each blackboard script to its name,
	// for the round-trip shapes.
	scriptNames map[string]string
	figures     map[string]Figure
	// added is the order figures were added in: those not in figureOrder
	// (the scale curves, whose names depend on the options) follow it.
	added  []string
	report *Report
	// longIdleStack is the stack the idle-long step reads, started
	// before the other steps.
	longIdleStack *longIdleStack
}

// figureOrder is the order of the table: the order of targets.
var figureOrder = []string{
	"hop_1_agent", "hop_5_agents", "hop_1_agent_tcp", "hop_1_agent_cluster", "hop_1_agent_tls", "end_to_end_outside", "goal_write", "tool_start_floor", "tool_run_floor",
	"round_trips_per_claim_1_agent", "round_trips_per_claim_5_agents",
	"commands_sent_per_claim_1_agent", "commands_sent_per_claim_5_agents",
	"redis_commands_per_claim_1_agent", "redis_commands_per_claim_5_agents",
	"redis_cpu_per_claim_1_agent", "redis_cpu_floor_per_claim_1_agent", "redis_cpu_per_claim_5_agents", "redis_cpu_floor_per_claim_5_agents",
	"throughput_200_goals", "throughput_200_goals_tcp", "throughput_200_goals_cluster", "throughput_200_goals_tls",
	"asynq_enqueue_to_handler", "asynq_enqueue_to_handler_default", "asynq_throughput", "asynq_redis_cpu_per_task",
	"ratio_asynq_latency", "ratio_asynq_latency_default", "ratio_asynq_throughput", "ratio_asynq_redis_cpu",
	"end_to_end_review_exclusive", "feedback_claim_after_last_review",
	"context_chain_depth_10", "context_chain_feedback_3_reviews",
	"tool_input_bytes_rework_4_reviews", "tool_input_bytes_rework_4_reviews_no_memory",
	"hoard_first_page_100k", "resolve_short_id_100k",
	"console_workflow_page_500", "console_list_page_100k", "console_list_filtered_100k", "console_hop_no_clients", "console_hop_with_clients",
	"scale_read_status", "scale_read_hoard_first_page", "scale_read_watch_catch_up", "scale_read_vault_pass",
	"idle_rss_orchestrator", "idle_rss_cub", "idle_cpu_orchestrator", "idle_cpu_cub",
	"long_idle_rss_orchestrator", "long_idle_rss_cub", "long_idle_cpu_orchestrator", "long_idle_cpu_cub",
	"llm_agent_start_to_request", "llm_agent_response_to_output", "llm_agent_overhead",
	"orchestrator_recovery", "scale_restart_first_grant", "scale_restart_drain",
	"vault_file_to_goal", "vault_settled_to_goal", "vault_decision_to_applied",
	"retention_memory_off", "retention_memory_on", "retention_events_length",
}

// Run builds the binaries, runs every scenario and returns the report.
// It needs `go`, `git` and `redis-server` on PATH. An error means a
// scenario could not be measured (a daemon failed, a workflow did not
// complete); figures that miss their targets are not errors.
func Run(ctx context.Context, opts Options) (Report, error) {
	opts = opts.withDefaults()
	started := time.Now()
	r := &runner{opts: opts, figures: map[string]Figure{}, report: &Report{StartedAt: started.UTC(), Options: opts}}
	if err := checkOnly(opts.Only, r.steps()); err != nil {
		return Report{}, err
	}
	var err error
	if r.root = opts.RepoRoot; r.root == "" {
		if r.root, err = findRepoRoot(); err != nil {
			return Report{}, err
		}
	}
	if r.workDir = opts.WorkDir; r.workDir == "" {
		if r.workDir, err = os.MkdirTemp("", "sett-bench-*"); err != nil {
			return Report{}, fmt.Errorf("bench: %w", err)
		}
		if !opts.KeepWorkDir {
			defer os.RemoveAll(r.workDir)
		}
	}
	r.describeHost(ctx)
	r.progress("building the daemons and the no-op tool in %s", r.workDir)
	if r.bins, err = buildBinaries(ctx, r.root, filepath.Join(r.workDir, "bin")); err != nil {
		return Report{}, err
	}
	if r.scriptNames, err = loadScriptNames(r.root); err != nil {
		return Report{}, err
	}
	selected := func(key string) bool { return len(opts.Only) == 0 || slices.Contains(opts.Only, key) }
	startLongIdle := selected("idle-long")
	defer func() {
		if r.longIdleStack != nil {
			r.longIdleStack.stack.Close()
		}
	}()
	for _, step := range r.steps() {
		if !selected(step.key) {
			continue
		}
		if startLongIdle && step.key != "idle" {
			// Up as early as it can be without sharing the idle step's
			// window, so that it has been idle long by the end of the run.
			startLongIdle = false
			r.progress("long-idle stack: starting; read at the end of the run")
			if r.longIdleStack, err = r.startLongIdle(ctx); err != nil {
				return Report{}, fmt.Errorf("long idle: %w", err)
			}
		}
		r.progress("%s ...", step.name)
		t := time.Now()
		if err := step.run(ctx); err != nil {
			return Report{}, fmt.Errorf("%s: %w", step.name, err)
		}
		r.progress("%s done in %s", step.name, time.Since(t).Round(time.Millisecond))
	}
	r.asynqRatios()
	for _, name := range figureOrder {
		if f, ok := r.figures[name]; ok {
			r.report.Figures = append(r.report.Figures, f)
		}
	}
	for _, name := range r.added {
		if !slices.Contains(figureOrder, name) {
			r.report.Figures = append(r.report.Figures, r.figures[name])
		}
	}
	if floor, ok := r.figures["tool_start_floor"]; ok {
		for _, name := range []string{"hop_1_agent", "hop_5_agents"} {
			if hop, ok := r.figures[name]; ok {
				r.note("%s: p50 %s ms of which the tool start floor (p50) is %s ms: coordination ≈ %s ms",
					name, formatValue(hop.P50), formatValue(floor.P50), formatValue(hop.P50-floor.P50))
			}
		}
	}
	r.report.Machine.LoadAvgEnd = loadAvg()
	r.report.DurationS = time.Since(started).Seconds()
	return *r.report, nil
}

// step is one scenario of a run; key is its name for Options.Only.
type step struct {
	key, name string
	run       func(context.Context) error
}

// steps are the scenarios in the order they run.
func (r *runner) steps() []step {
	return []step{
		{"idle", "idle and hop, 5 agents", r.idleAndHop5},
		{"floor", "tool start floor", r.toolFloor},
		{"hop", "hop, 1 agent", r.hop1},
		{"end-to-end", "end to end", r.endToEnd},
		{"throughput", "throughput", r.throughput},
		{"topologies", "hop and throughput over loopback TCP, on a Redis Cluster and over TLS", r.topologies},
		{"feedback", "feedback claim", r.feedback},
		{"tool-input", "tool input sizes with and without memories", r.toolInputSizes},
		{"round-trips", "round trips", r.roundTrips},
		{"in-process", "context chains and hoard", r.inProcess},
		{"console", "web console pages and hop with live clients", r.consoleStep},
		{"llm", "LLM agent overhead", r.llmAgent},
		{"recovery", "orchestrator recovery", r.recovery},
		{"vault", "vault", r.vaultLatency},
		{"retention", "retention", r.retention},
		{"asynq", "asynq side by side (bench/asynq)", r.asynqSideBySide},
		{"scale-inflight", "scale: a fresh goal with N workflows in flight", r.scaleInFlight},
		{"scale-agents", "scale: a fresh goal with M agents alive", r.scaleAgents},
		{"scale-restart", "scale: orchestrator restart with claims waiting", r.scaleRestart},
		{"scale-reads", "scale: status, hoard and watch catch-up at scale", r.scaleReads},
		{"idle-long", "RSS and CPU after a long idle", r.longIdle},
	}
}

// StepKeys lists the keys Options.Only accepts, in run order.
func StepKeys() []string {
	var keys []string
	for _, s := range (&runner{}).steps() {
		keys = append(keys, s.key)
	}
	return keys
}

// checkOnly refuses a key that names no step, so a typo does not
// silently run nothing.
func checkOnly(only []string, steps []step) error {
	for _, k := range only {
		if !slices.ContainsFunc(steps, func(s step) bool { return s.key == k }) {
			return fmt.Errorf("bench: no step %q (steps: %s)", k, strings.Join(StepKeys(), ", "))
		}
	}
	return nil
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.opts.Progress, "bench: "+format+"\n", args...)
}

func (r *runner) add(f Figure) {
	if _, ok := r.figures[f.Name]; !ok {
		r.added = append(r.added, f.Name)
	}
	r.figures[f.Name] = f
}

func (r *runner) note(format string, args ...any) {
	r.report.Notes = append(r.report.Notes, fmt.Sprintf(format, args...))
}

// describeHost fills the commit, toolchain and machine of the report.
func (r *runner) describeHost(ctx context.Context) {
	rep := r.report
	out := func(dir string, name string, args ...string) string {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		b, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	rep.Commit = out(r.root, "git", "rev-parse", "HEAD")
	rep.CommitShort = out(r.root, "git", "rev-parse", "--short", "HEAD")
	if rep.CommitShort == "" {
		rep.CommitShort = "nogit"
	}
	// Untracked files count (a new .go file changes the build); the
	// results of earlier runs do not.
	rep.Dirty = out(r.root, "git", "status", "--porcelain", "--", ".", ":(exclude)bench/results") != ""
	if rep.GoVersion = out(r.root, "go", "env", "GOVERSION"); rep.GoVersion == "" {
		rep.GoVersion = runtime.Version()
	}
	m := &rep.Machine
	m.OS, m.Arch, m.CPUs = runtime.GOOS, runtime.GOARCH, runtime.NumCPU()
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		var n int
		fmt.Sscanf(kb, "%d", &n)
		m.MemTotalMB = n / 1024
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if v := out(r.root, "redis-server", "--version"); v != "" {
		for _, f := range strings.Fields(v) {
			if s, ok := strings.CutPrefix(f, "v="); ok {
				m.RedisVersion = s
			}
		}
	}
	m.LoadAvgStart = loadAvg()
}

// procField returns the value of the first "name: value" line of a /proc
// file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// loadScriptNames computes the digest of each blackboard script the way
// internal/blackboard loads it (lib.lua, a newline, the script) so that
// EVALSHA calls can be named. A digest that does not match (the loader
// changed) only makes shapes show the digest instead of the name.
func loadScriptNames(root string) (map[string]string, error) {
	dir := filepath.Join(root, "internal", "blackboard", "scripts")
	lib, err := os.ReadFile(filepath.Join(dir, "lib.lua"))
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.lua"))
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	names := map[string]string{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".lua")
		if name == "lib" {
			continue
		}
		body, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		sum := sha1.Sum([]byte(string(lib) + "\n" + string(body)))
		names[hex.EncodeToString(sum[:])] = name
	}
	return names, nil
}

// wait waits for d or the end of ctx: an observation window, not a wait
// for something to happen.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
