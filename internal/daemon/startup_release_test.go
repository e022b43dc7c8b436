package daemon

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"
)

// TestReleaseStartupMemoryWaitsForReadiness checks that the release
// happens only once the daemon is ready, and happens then, with one
// rewarm in it.
func TestReleaseStartupMemoryWaitsForReadiness(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(&buf).Level(zerolog.DebugLevel)
	var polls atomic.Int32
	ready := func() bool {
		if strings.Contains(buf.String(), "released") {
			t.Error("released before the daemon was ready")
		}
		return polls.Add(1) >= 3
	}
	var rewarms atomic.Int32
	rewarm := func(context.Context) {
		if polls.Load() < 3 {
			t.Error("rewarmed before the daemon was ready")
		}
		rewarms.Add(1)
	}
	ReleaseStartupMemory(context.Background(), ready, rewarm, log)
	if rewarms.Load() != 1 {
		t.Errorf("rewarm ran %d times, want once", rewarms.Load())
	}
	if polls.Load() != 3 {
		t.Errorf("readiness polled %d times, want 3 (until it first held)", polls.Load())
	}
	out := buf.String()
	if !strings.Contains(out, `"message":"start-up memory released"`) || strings.Contains(out, `"segments":0`) {
		t.Fatalf("log %q, want the release with the executable's segments", out)
	}
}

func TestReleaseStartupMemoryGivesUpWhenCtxEnds(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(&buf).Level(zerolog.DebugLevel)
	ctx, cancel := context.WithCancel(context.Background())
	ready := func() bool { cancel(); return false }
	ReleaseStartupMemory(ctx, ready, nil, log) // returns: the test would hang otherwise
	if buf.Len() != 0 {
		t.Fatalf("log %q, want no release for a daemon that never became ready", buf.String())
	}
}
