package chaos

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/stacktest"
)

// TestSmoke runs a short seeded campaign (20 workflows, 5 faults) on the
// real daemons and redis-server, as `make test` and `make chaos-smoke`
// do, and fails when any invariant broke.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real daemons against redis-server (run without -short)")
	}
	opts, err := SmokeOptions().FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	opts.WorkDir = t.TempDir()
	opts.Progress = stacktest.LogWriter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	if rep.Workflows != opts.Workflows {
		t.Errorf("%d workflows posted, want %d", rep.Workflows, opts.Workflows)
	}
	injected := 0
	for _, n := range rep.Injected {
		injected += n
	}
	if injected != opts.Faults {
		t.Errorf("%d faults injected, want %d", injected, opts.Faults)
	}
	if !rep.OK() {
		t.Error("an invariant broke (see the table)")
	}
}

func TestDoubleRuns(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/stamps"
	// Lines: kind, claim, agent, pid, Unix ns, parent (cub) pid.
	body := strings.Join([]string{
		"S c1 coder 10 100 1", "E c1 coder 10 200 1", // c1: two runs one after the other
		"S c1 coder 11 300 1", "E c1 coder 11 400 1",
		"S c2 coder 12 100 1", "S c2 coder 13 150 2", "E c2 coder 12 200 1", "E c2 coder 13 250 2", // c2: overlap
		"S c3 coder 14 100 1", // c3: killed, never ended; alone
		// c4: killed at about 1s (its last alive stamp); the next run
		// starts after that: no overlap.
		"S c4 coder 15 0 1", "A c4 coder 15 1000000000 1", "S c4 coder 16 1200000000 2", "E c4 coder 16 1300000000 2",
		// c5: the killed run was still alive when the next one started.
		"S c5 coder 17 0 1", "A c5 coder 17 1000000000 1", "S c5 coder 18 900000000 2", "E c5 coder 18 1300000000 2",
		// c6: the next run starts within one alive step of the last
		// stamp, but after the killed run's cub (pid 3) was reaped.
		"S c6 coder 19 0 3", "A c6 coder 19 1000000000 3", "S c6 coder 20 1050000000 4", "E c6 coder 20 1300000000 4",
		// c7: the same, but the cub (pid 5) was reaped only after the
		// next run started: an overlap.
		"S c7 coder 21 0 5", "A c7 coder 21 1000000000 5", "S c7 coder 22 1050000000 4", "E c7 coder 22 1300000000 4",
		// c8: a cub with pid 6 died before this run began (a reused
		// pid): the death does not bound it, and the next run overlaps.
		"S c8 coder 23 2000000000 6", "A c8 coder 23 3000000000 6", "S c8 coder 24 3050000000 4", "E c8 coder 24 3300000000 4",
	}, "\n") + "\n"
	if err := writeFile(path, body); err != nil {
		t.Fatal(err)
	}
	deaths := map[int]int64{3: 1040000000, 5: 1060000000, 6: 1500000000}
	n, err := doubleRuns(path, deaths)
	if err != nil || n != 4 {
		t.Errorf("doubleRuns = %d, %v; want 4 (c2, c5, c7, c8)", n, err)
	}
}
