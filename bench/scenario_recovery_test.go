package bench

import (
	"context"
	"testing"
	"time"

	"github.com/settdev/sett/internal/stacktest"
)

// TestRecoveryScenario runs the orchestrator recovery scenario alone on
// the real daemons: every restart must be measured (a restart that never
// granted would fail the scenario). It asserts no timing; `make bench`
// judges the figure.
func TestRecoveryScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real daemons against redis-server (run without -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts := SmokeOptions().withDefaults()
	opts.RecoverySamples = 3
	opts.Progress = stacktest.LogWriter(t)
	r := scenarioRunner(ctx, t, opts, t.TempDir())
	if err := r.recovery(ctx); err != nil {
		t.Fatal(err)
	}
	f, ok := r.figures["orchestrator_recovery"]
	if !ok || f.Samples != 3 || len(f.Values) != 3 {
		t.Fatalf("figure = %+v, want 3 samples", f)
	}
	t.Logf("orchestrator kill -9 → next grant: p50 %s ms, max %s ms", formatValue(f.P50), formatValue(f.Max))
}
