package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRetentionScenario runs only the retention scenario (real daemons,
// redis-server) with smoke counts: the janitor must empty the workflows
// index, and every figure must be measured. It never asserts a timing.
func TestRetentionScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real daemons against redis-server (run without -short)")
	}
	opts := SmokeOptions().withDefaults()
	opts.Progress = testLog{t}
	workDir := t.TempDir()
	if d := os.Getenv("BENCH_KEEP_DIR"); d != "" {
		workDir = d
	}
	r := &runner{opts: opts, figures: map[string]Figure{}, report: &Report{Options: opts}, workDir: workDir}
	var err error
	if r.root, err = findRepoRoot(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if r.bins, err = buildBinaries(ctx, r.root, filepath.Join(r.workDir, "bin")); err != nil {
		t.Fatal(err)
	}
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
