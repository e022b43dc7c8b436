package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/stacktest"
)

// TestSmoke runs the whole harness — the real daemons, the no-op tool and
// redis-server — with tiny sample counts, so that `make test` keeps it
// working. It asserts that every figure was measured; it never asserts a
// timing.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real daemons against redis-server (run without -short)")
	}
	opts := SmokeOptions()
	opts.WorkDir = t.TempDir()
	opts.Progress = stacktest.LogWriter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The scale curves: hop, throughput and Redis CPU per level.
	scale := 3 * (len(opts.ScaleInFlight) + 2*len(opts.ScaleAgents))
	if len(rep.Figures) != len(figureOrder)+scale {
		t.Errorf("%d figures, want %d", len(rep.Figures), len(figureOrder)+scale)
	}

	for _, name := range figureOrder {
		f, ok := rep.Figure(name)
		switch {
		case !ok:
			t.Errorf("figure %s missing", name)
		case f.Samples == 0 || len(f.Values) != f.Samples:
			t.Errorf("figure %s has %d samples (%d values)", name, f.Samples, len(f.Values))
		case f.Status != StatusPass && f.Status != StatusMiss && f.Status != StatusInfo:
			t.Errorf("figure %s has status %q", name, f.Status)
		case f.Unit == "" || f.Title == "" || f.SampleOf == "":
			t.Errorf("figure %s lacks a unit, title or sample description: %+v", name, f)
		}
	}
	for _, name := range []string{"hop_stages_1", "hop_stages_5", "hop_stages_1_tcp", "hop_stages_1_cluster", "hop_stages_1_tls",
		"throughput_cpu", "throughput_redis_time",
		"round_trips_1", "round_trips_5", "redis_commands_1", "redis_commands_5",
		"redis_time_claim_1_agent", "redis_time_claim_5_agents", "scale_commands_inflight", "scale_commands_agents", "scale_commands_agents_decided"} {
		found := false
		for _, b := range rep.Breakdowns {
			if b.Name == name {
				found = len(b.Rows) > 0
			}
		}
		if !found {
			t.Errorf("breakdown %s missing or empty", name)
		}
	}
	if rep.Commit == "" || rep.GoVersion == "" || rep.Machine.CPUs == 0 || rep.Machine.RedisVersion == "" {
		t.Errorf("report lacks where it ran: commit %q, go %q, machine %+v", rep.Commit, rep.GoVersion, rep.Machine)
	}

	// What `make bench` writes: the table, the JSON and the benchmark lines.
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Figures {
		if !strings.Contains(table.String(), f.Title) {
			t.Errorf("the table lacks %q", f.Title)
		}
	}
	jsonPath, benchPath, err := rep.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Figures) != len(rep.Figures) {
		t.Errorf("JSON holds %d figures, want %d", len(back.Figures), len(rep.Figures))
	}
	lines, err := os.ReadFile(benchPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Figures {
		name, _, _ := benchName(f)
		if n := bytes.Count(lines, []byte(name+" 1 ")); n != f.Samples {
			t.Errorf("%d benchmark lines for %s, want %d", n, name, f.Samples)
		}
	}
	if t.Failed() {
		t.Logf("table:\n%s", table.String())
	}
}
