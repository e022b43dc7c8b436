package daemonproc

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeEnv makes the test binary a fake daemon (see fakeDaemon) instead of
// running the tests.
const fakeEnv = "DAEMONPROC_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeDaemon(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeDaemon serves /readyz on the --http-addr it is given, as Sett's
// daemons do. Modes: "ready" exits 0 on SIGTERM; "deaf" ignores SIGTERM;
// "crash" writes a line and exits 3 before listening.
func fakeDaemon(mode string, args []string) int {
	if mode == "crash" {
		fmt.Println("fake: cannot reach redis")
		return 3
	}
	if len(args) < 2 || args[0] != "--http-addr" {
		fmt.Println("fake: want --http-addr first, got", args)
		return 2
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	http.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	go func() { _ = http.ListenAndServe(args[1], nil) }()
	for range term {
		if mode == "ready" {
			return 0
		}
	}
	return 0
}

func fake(t *testing.T, mode string) *Process {
	t.Helper()
	p, err := New(Spec{Name: "fake-" + mode, Argv: []string{os.Args[0]}, Env: []string{fakeEnv + "=" + mode}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.KillGroup)
	return p
}

// TestStopAndRestart: a daemon gets ready, stops on SIGTERM with its exit
// code, and starts again on the same address; stopping it was expected.
func TestStopAndRestart(t *testing.T) {
	ctx := context.Background()
	p := fake(t, "ready")
	for run := 1; run <= 2; run++ {
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err == nil {
			t.Fatalf("run %d: a second Start of a running process succeeded", run)
		}
		if err := p.WaitReady(ctx, 30*time.Second); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if !p.Running() || !Ready(ctx, p.HTTPAddr) {
			t.Fatalf("run %d: running %v, ready %v after WaitReady", run, p.Running(), Ready(ctx, p.HTTPAddr))
		}
		p.Stop(30 * time.Second)
		if p.Running() || p.ExitCode() != 0 {
			t.Fatalf("run %d: after Stop: running %v, exit code %d; want stopped with 0", run, p.Running(), p.ExitCode())
		}
	}
	if n := p.UnexpectedExits(); n != 0 {
		t.Errorf("%d unexpected exits, want 0 (both runs were stopped)", n)
	}
}

// TestStopKillsADeafDaemon: a daemon that ignores SIGTERM is killed once
// the grace has passed.
func TestStopKillsADeafDaemon(t *testing.T) {
	p := fake(t, "deaf")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitReady(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Stop(50 * time.Millisecond)
	if p.Running() || p.ExitCode() != -1 {
		t.Fatalf("after Stop: running %v, exit code %d; want killed by a signal (-1)", p.Running(), p.ExitCode())
	}
}

// TestWaitReadyFailsWhenTheDaemonExits: WaitReady reports a daemon that
// exited instead of waiting out its deadline, with its log's end; the exit
// counts as unexpected.
func TestWaitReadyFailsWhenTheDaemonExits(t *testing.T) {
	p := fake(t, "crash")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	err := p.WaitReady(context.Background(), time.Hour)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready (exit status 3)") ||
		!strings.Contains(err.Error(), "fake: cannot reach redis") {
		t.Fatalf("WaitReady = %v, want the exit and the log's last line", err)
	}
	if n := p.UnexpectedExits(); n != 1 {
		t.Errorf("%d unexpected exits, want 1", n)
	}
}

// TestKillIsACrash: Kill ends the daemon with SIGKILL; Signal afterwards
// reports that there is nothing to signal.
func TestKillIsACrash(t *testing.T) {
	p := fake(t, "deaf")
	if err := p.Signal(syscall.SIGTERM); err == nil {
		t.Fatal("Signal before Start succeeded")
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	p.Kill()
	if p.Running() || p.ExitCode() != -1 || p.Pid() != pid {
		t.Fatalf("after Kill: running %v, exit code %d, pid %d (was %d)", p.Running(), p.ExitCode(), p.Pid(), pid)
	}
	if err := p.Signal(syscall.SIGCONT); err == nil {
		t.Error("Signal to an exited process succeeded")
	}
}
