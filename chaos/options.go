package chaos

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// Options set the size of a campaign. The zero value of a field means its
// default (DefaultOptions).
type Options struct {
	// Workflows is the number of goals posted. Default 500.
	Workflows int
	// Faults is the number of faults injected. Default 50.
	Faults int
	// Seed makes the fault kinds, their order and their timing
	// reproducible. Default 1.
	Seed int64
	// Drain bounds the wait for every workflow to end after the last
	// fault; what is still running then counts as stuck. Default 5m.
	Drain time.Duration
	// WorkDir holds binaries, sett.yml, Redis data and logs; empty means
	// a new temporary directory, removed afterwards unless KeepWorkDir.
	WorkDir     string
	KeepWorkDir bool
	// RepoRoot is the module root to build from; empty: found from the
	// working directory (daemonproc.RepoRoot).
	RepoRoot string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// Rollback adds the "kill redis, AOF tail cut" fault, in which Redis
	// itself loses acknowledged writes (CHAOS_ROLLBACK=1). It is not in
	// the default campaign: with it, the invariants do not all hold yet
	// (a rolled-back blackboard can leave a workflow stuck, a version
	// written twice, or a completion without its final artefact).
	Rollback bool
}

// DefaultOptions are the counts of `make chaos`.
func DefaultOptions() Options {
	return Options{Workflows: 500, Faults: 50, Seed: 1, Drain: 5 * time.Minute}
}

// SmokeOptions are the counts of `make chaos-smoke` and the test that
// `make test` runs: well under two minutes.
func SmokeOptions() Options {
	return Options{Workflows: 20, Faults: 5, Seed: 1, Drain: 60 * time.Second}
}

// FromEnv overrides o with CHAOS_WORKFLOWS, CHAOS_FAULTS and CHAOS_SEED
// when they are set; a value that is not a number is an error naming the
// variable.
func (o Options) FromEnv() (Options, error) {
	for _, v := range []struct {
		name string
		dst  *int64
	}{{"CHAOS_SEED", &o.Seed}} {
		if s := os.Getenv(v.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return o, fmt.Errorf("chaos: %s=%q is not a number (use an integer like 42)", v.name, s)
			}
			*v.dst = n
		}
	}
	for _, v := range []struct {
		name string
		dst  *int
	}{{"CHAOS_WORKFLOWS", &o.Workflows}, {"CHAOS_FAULTS", &o.Faults}} {
		if s := os.Getenv(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return o, fmt.Errorf("chaos: %s=%q is not a count (use a whole number like 20)", v.name, s)
			}
			*v.dst = n
		}
	}
	if s := os.Getenv("CHAOS_ROLLBACK"); s != "" {
		on, err := strconv.ParseBool(s)
		if err != nil {
			return o, fmt.Errorf("chaos: CHAOS_ROLLBACK=%q is not a boolean (use 1 or 0)", s)
		}
		o.Rollback = on
	}
	return o, nil
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Workflows <= 0 {
		o.Workflows = d.Workflows
	}
	if o.Faults < 0 {
		o.Faults = 0
	}
	if o.Seed == 0 {
		o.Seed = d.Seed
	}
	if o.Drain <= 0 {
		o.Drain = d.Drain
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o644) }
