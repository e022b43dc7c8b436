package bench

import (
	"context"
	"testing"
	"time"

	"github.com/settdev/sett/internal/stacktest"
)

// TestLongIdleReadsAfterTheWholeWindow: the long-idle step reads its
// stack only once the stack has been idle for Options.LongIdle, and
// reports the orchestrator and every cub. It asserts no RSS or CPU value;
// `make bench` judges them.
func TestLongIdleReadsAfterTheWholeWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real daemons against redis-server (run without -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := SmokeOptions().withDefaults()
	opts.LongIdle = 3 * time.Second
	opts.Progress = stacktest.LogWriter(t)
	r := scenarioRunner(ctx, t, opts, t.TempDir())
	var err error
	if r.longIdleStack, err = r.startLongIdle(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.longIdleStack.stack.Close()
	ready := r.longIdleStack.ready
	if err := r.longIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if idle := time.Since(ready); idle < opts.LongIdle {
		t.Errorf("read after %s idle, want at least %s", idle, opts.LongIdle)
	}
	for name, samples := range map[string]int{
		"long_idle_rss_orchestrator": 1, "long_idle_rss_cub": 5,
		"long_idle_cpu_orchestrator": 1, "long_idle_cpu_cub": 5,
	} {
		f, ok := r.figures[name]
		if !ok {
			t.Errorf("no figure %s", name)
			continue
		}
		if len(f.Values) != samples {
			t.Errorf("%s: %d values, want %d", name, len(f.Values), samples)
		}
	}
	if f := r.figures["long_idle_rss_orchestrator"]; f.Max <= 0 {
		t.Errorf("orchestrator RSS read as %v MB", f.Max)
	}
	if n := len(r.report.Breakdowns); n != 1 || len(r.report.Breakdowns[0].Rows) != 6 {
		t.Errorf("breakdowns = %+v, want one with the orchestrator and 5 cubs", r.report.Breakdowns)
	}
}
