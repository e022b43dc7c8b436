package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Throwaway harness (not committed): round trips + hop only.
func TestHotpathRT(t *testing.T) {
	opts := SmokeOptions().withDefaults()
	opts.RoundTripBatches, opts.RoundTripBatchClaims = 3, 20
	if n, err := strconv.Atoi(os.Getenv("HOP_SAMPLES")); err == nil {
		opts.HopSamples = n
	}
	opts.Progress = testLog{t}
	r := &runner{opts: opts, figures: map[string]Figure{}, report: &Report{Options: opts}, workDir: t.TempDir()}
	var err error
	if r.root, err = findRepoRoot(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if r.bins, err = buildBinaries(ctx, r.root, filepath.Join(r.workDir, "bin")); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("SKIP_RT") == "" {
		if err := r.roundTrips(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getenv("HOP") != "" {
		if err := r.hop1(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for name, f := range r.figures {
		fmt.Printf("FIG %-28s n=%d p50=%.3f p90=%.3f p99=%.3f mean=%.3f\n", name, f.Samples, f.P50, f.P90, f.P99, f.Mean)
	}
	for _, b := range r.report.Breakdowns {
		fmt.Println("BREAKDOWN", b.Name, b.Columns)
		for _, row := range b.Rows {
			fmt.Println("  ", row)
		}
	}
}
