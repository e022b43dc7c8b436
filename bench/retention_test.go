package bench

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/settdev/sett/internal/stacktest"
)

// TestRetentionScenario runs only the retention scenario (real daemons,
// redis-server) with smoke counts: the janitor must empty the workflows
// index, and every figure must be measured. It never asserts a timing.
func TestRetentionScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real daemons against redis-server (run without -short)")
	}
	opts := SmokeOptions().withDefaults()
	// BENCH_RETENTION_WORKFLOWS measures at the size of `make bench`
	// (10000) without the rest of the harness.
	if n, err := strconv.Atoi(os.Getenv("BENCH_RETENTION_WORKFLOWS")); err == nil && n > 0 {
		opts.RetentionWorkflows = n
	}
	opts.Progress = stacktest.LogWriter(t)
	workDir := t.TempDir()
	if d := os.Getenv("BENCH_KEEP_DIR"); d != "" {
		workDir = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r := scenarioRunner(ctx, t, opts, workDir)
	if err := r.retention(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"retention_memory_off", "retention_memory_on", "retention_events_length"} {
		f, ok := r.figures[name]
		if !ok || f.Samples == 0 {
			t.Errorf("figure %s missing or empty: %+v", name, f)
		}
	}
	if on, off := r.figures["retention_memory_on"], r.figures["retention_memory_off"]; on.Max >= off.Max {
		t.Errorf("memory per workflow with retention on %.0f ≥ off %.0f bytes", on.Max, off.Max)
	}
}
