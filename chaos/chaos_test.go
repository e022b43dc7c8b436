package chaos

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

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
	opts.Progress = testLog{t}
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
	body := strings.Join([]string{
		"S c1 coder 10 100", "E c1 coder 10 200", // c1: two runs one after the other
		"S c1 coder 11 300", "E c1 coder 11 400",
		"S c2 coder 12 100", "S c2 coder 13 150", "E c2 coder 12 200", "E c2 coder 13 250", // c2: overlap
		"S c3 coder 14 100", // c3: killed, never ended; alone
	}, "\n") + "\n"
	if err := writeFile(path, body); err != nil {
		t.Fatal(err)
	}
	n, err := doubleRuns(path)
	if err != nil || n != 1 {
		t.Errorf("doubleRuns = %d, %v; want 1 (c2)", n, err)
	}
}
