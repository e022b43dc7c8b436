package idlemem

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/syncbuf"
)

// TestKeepReleasesOnceReady checks the real release: it happens
// only once the daemon is ready, drops the executable's segments, and runs
// one rewarm in it.
func TestKeepReleasesOnceReady(t *testing.T) {
	var buf syncbuf.Buffer
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
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Keep(ctx, ready, rewarm, log)
	}()
	eventually.True(t, 10*time.Second, "the start-up release", func() bool {
		return strings.Contains(buf.String(), `"message":"start-up memory released"`)
	})
	cancel()
	<-done
	if rewarms.Load() != 1 {
		t.Errorf("rewarm ran %d times, want once", rewarms.Load())
	}
	if polls.Load() != 3 {
		t.Errorf("readiness polled %d times, want 3 (until it first held)", polls.Load())
	}
	if out := buf.String(); strings.Contains(out, `"segments":0`) {
		t.Fatalf("log %q, want the release with the executable's segments", out)
	}
}

func TestKeepGivesUpWhenCtxEnds(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(&buf).Level(zerolog.DebugLevel)
	ctx, cancel := context.WithCancel(context.Background())
	ready := func() bool { cancel(); return false }
	Keep(ctx, ready, nil, log) // returns: the test would hang otherwise
	if buf.Len() != 0 {
		t.Fatalf("log %q, want no release for a daemon that never became ready", buf.String())
	}
}

// releaserFixture runs a memoryReleaser whose periods the test ends
// (ticks) and whose CPU meter the test sets.
type releaserFixture struct {
	t        *testing.T
	ticks    chan time.Time
	log      *syncbuf.Buffer
	cpu      atomic.Int64 // nanoseconds of process CPU time so far
	releases atomic.Int32
	rewarms  atomic.Int32
	// reads counts the releaser's readings of the CPU meter: one as the
	// baseline after each release, one at the end of each period.
	reads  atomic.Int32
	judged int // periods ended so far
}

// startReleaser starts a releaser with the given period and returns once
// its start-up release is done. Each release adds releaseCost to the CPU
// time, as a real one's collection does.
func startReleaser(t *testing.T, period, releaseCost time.Duration) *releaserFixture {
	f := &releaserFixture{t: t, ticks: make(chan time.Time), log: &syncbuf.Buffer{}}
	r := memoryReleaser{
		ready:  func() bool { return true },
		rewarm: func(context.Context) { f.rewarms.Add(1) },
		release: func(rewarm func()) (Stats, error) {
			rewarm()
			f.cpu.Add(int64(releaseCost))
			f.releases.Add(1)
			return Stats{Segments: 2}, nil
		},
		cpuTime: func() (time.Duration, error) {
			f.reads.Add(1)
			return time.Duration(f.cpu.Load()), nil
		},
		ticks:  f.ticks,
		period: period,
		log:    zerolog.New(f.log).Level(zerolog.DebugLevel),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	eventually.True(t, 10*time.Second, "the start-up release", func() bool { return f.releases.Load() == 1 })
	f.awaitBaseline(1)
	return f
}

// awaitBaseline waits until the releaser has read the CPU meter want
// times in all, so that the CPU time the test adds next falls into the
// coming period and not into the baseline the releaser measures it from.
func (f *releaserFixture) awaitBaseline(want int32) {
	f.t.Helper()
	eventually.True(f.t, 10*time.Second, "the releaser's CPU baseline", func() bool { return f.reads.Load() == want })
}

// endPeriod ends a period in which the daemon used cpu, waits until the
// releaser logged its judgement of it, and reports whether it released.
func (f *releaserFixture) endPeriod(cpu time.Duration) bool {
	f.t.Helper()
	before, reads := f.releases.Load(), f.reads.Load()
	f.cpu.Add(int64(cpu))
	f.ticks <- time.Now()
	f.judged++
	eventually.True(f.t, 10*time.Second, "the judgement of the period", func() bool {
		out := f.log.String()
		return strings.Count(out, `"idle memory released"`)+strings.Count(out, `"memory release skipped: busy"`) == f.judged
	})
	released := f.releases.Load() > before
	// The period's end is one reading; a release takes a new baseline.
	if released {
		f.awaitBaseline(reads + 2)
	} else {
		f.awaitBaseline(reads + 1)
	}
	return released
}

func TestKeepReleasesAgainOnlyAfterAnIdlePeriod(t *testing.T) {
	tests := []struct {
		name    string
		cpu     time.Duration
		release bool
	}{
		{name: "idle daemon (0.03 % of a core)", cpu: 18 * time.Millisecond, release: true},
		{name: "a few claims (just under 1 %)", cpu: 599 * time.Millisecond, release: true},
		{name: "busy daemon (1 % of a core)", cpu: 600 * time.Millisecond, release: false},
		{name: "saturated daemon", cpu: 50 * time.Second, release: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := startReleaser(t, time.Minute, 0)
			if got := f.endPeriod(tc.cpu); got != tc.release {
				t.Fatalf("released = %v after a minute with %v of CPU, want %v", got, tc.cpu, tc.release)
			}
			// Whatever came before, an idle period releases.
			if !f.endPeriod(0) {
				t.Fatal("no release after the next, idle minute")
			}
			if f.rewarms.Load() != f.releases.Load() {
				t.Errorf("rewarms = %d, releases = %d: want a rewarm in every release", f.rewarms.Load(), f.releases.Load())
			}
		})
	}
}

// TestKeepDoesNotCountItsOwnCollection checks that the CPU time a
// release spends (its full collection) is not charged to the next period:
// a daemon that stays idle keeps being released.
func TestKeepDoesNotCountItsOwnCollection(t *testing.T) {
	// Each release costs 0.9 % of the period and the daemon uses 0.9 %
	// more: only the daemon's share may count.
	f := startReleaser(t, time.Minute, 540*time.Millisecond)
	for i := range 3 {
		if !f.endPeriod(540 * time.Millisecond) {
			t.Fatalf("period %d: no release, want one (the release's own CPU time was charged to the daemon)", i+1)
		}
	}
}

func TestKeepStopsWithoutACPUMeter(t *testing.T) {
	var releases atomic.Int32
	r := memoryReleaser{
		ready:   func() bool { return true },
		release: func(func()) (Stats, error) { releases.Add(1); return Stats{}, nil },
		cpuTime: func() (time.Duration, error) { return 0, errors.New("no meter") },
		ticks:   make(chan time.Time),
		period:  time.Minute,
		log:     zerolog.Nop(),
	}
	r.run(context.Background()) // returns: the test would hang otherwise
	if releases.Load() != 1 {
		t.Fatalf("releases = %d, want the start-up one only", releases.Load())
	}
}
