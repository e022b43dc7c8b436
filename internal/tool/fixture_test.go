//go:build linux

package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The fixture program (testdata/fixture) is built once per test binary into
// a directory that TestMain removes; t.TempDir would vanish with the first
// test that asked for it.
var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
)

func TestMain(m *testing.M) {
	// The test binary doubles as the sandbox helper (the cub's role) and
	// as a runner that the orphan tests kill.
	if len(os.Args) > 2 && os.Args[1] == SandboxArg {
		os.Exit(SandboxMain(os.Args[2:]))
	}
	if os.Getenv(runnerHelperEnv) != "" {
		os.Exit(runnerHelper())
	}
	code := m.Run()
	if fixtureDir != "" {
		_ = os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// fixture returns the absolute path of the built fixture program.
func fixture(t testing.TB) string {
	t.Helper()
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "sett-tool-fixture-")
		if fixtureErr != nil {
			return
		}
		goBin, err := exec.LookPath("go")
		if err != nil {
			fixtureErr = fmt.Errorf("the go command is needed to build the fixture: %w", err)
			return
		}
		build := exec.Command(goBin, "build", "-o", filepath.Join(fixtureDir, "fixture"), "./testdata/fixture")
		if out, err := build.CombinedOutput(); err != nil {
			fixtureErr = fmt.Errorf("building the fixture: %v\n%s", err, out)
		}
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return filepath.Join(fixtureDir, "fixture")
}

// fixtureSpec returns a Spec that runs the fixture with args in a fresh
// directory and a minimal environment.
func fixtureSpec(t testing.TB, args ...string) Spec {
	t.Helper()
	return Spec{
		Command: append([]string{fixture(t)}, args...),
		Dir:     t.TempDir(),
		Env:     []string{"PATH=/usr/bin:/bin"},
	}
}

// runBounded runs s and fails the test if Run does not return within a
// generous bound: a hang is the bug these tests look for, and this turns it
// into a clear failure instead of a test-binary timeout.
func runBounded(t testing.TB, ctx context.Context, s Spec) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- Run(ctx, s) }()
	select {
	case r := <-done:
		return r
	case <-time.After(2 * time.Minute):
		t.Fatalf("Run(%q) did not return", s.Command)
		return Result{}
	}
}

// grandchildPID finds "grandchild <pid>" in out.
func grandchildPID(t testing.TB, out []byte) int {
	t.Helper()
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "grandchild "); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				t.Fatalf("bad grandchild line %q", line)
			}
			return pid
		}
	}
	t.Fatalf("the fixture did not report its grandchild; output %q", out)
	return 0
}

// waitDead waits until pid has exited (it is gone, or a zombie waiting for
// its new parent to reap it), polling /proc against one deadline.
func waitDead(t testing.TB, pid int) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if err == nil {
			// The state follows the command name, which is in parentheses.
			if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
				if state := stat[i+2]; state == 'Z' || state == 'X' {
					return
				}
			}
		}
		select {
		case <-deadline.C:
			t.Fatalf("process %d is still alive: the process group was not killed", pid)
		case <-tick.C:
		}
	}
}
