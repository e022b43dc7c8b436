package idlemem

import (
	"context"
	"time"

	"github.com/rs/zerolog"
)

// Timing of the releases Keep makes.
const (
	// releasePoll is how often readiness is checked until it first holds.
	releasePoll = 50 * time.Millisecond
	// releaseSettle lets the last start-up steps after readiness (the
	// first reads of the loops, leader election) run before the first
	// release, so their pages are not mapped back at once.
	releaseSettle = 500 * time.Millisecond
	// idleReleaseEvery is how often an idle daemon gives back what it
	// mapped again since the last release. It is shorter than the Go
	// runtime's forced-collection period (two minutes): the release's own
	// collection resets that period, so in an idle daemon the forced
	// collection, which maps back about 2 MB of type and frame tables,
	// never comes after the pages are dropped.
	idleReleaseEvery = time.Minute
	// idleCPUShare is the share of one core below which a daemon counts
	// as idle over a period: an idle daemon uses about 0.03 %, a claim
	// about a millisecond. A busy daemon is left alone, so that its work
	// never pays for mapping the dropped pages back.
	idleCPUShare = 0.01
)

// Keep gives back memory the process does not use, until ctx ends. It
// waits until ready first reports true, lets start-up settle, and releases
// what only start-up needed: most of the executable's mapped pages and the
// heap's start-up garbage. Then, every idleReleaseEvery, it releases again
// if the process stayed idle meanwhile. rewarm, when not nil, runs the
// process's periodic work once between each release's collection and its
// drop of the pages (Release says why). Failures are logged at debug
// level: they cost memory, never correctness.
func Keep(ctx context.Context, ready func() bool, rewarm func(context.Context), log zerolog.Logger) {
	tick := time.NewTicker(idleReleaseEvery)
	defer tick.Stop()
	r := memoryReleaser{
		ready:   ready,
		rewarm:  rewarm,
		release: Release,
		cpuTime: processCPUTime,
		ticks:   tick.C,
		period:  idleReleaseEvery,
		log:     log,
	}
	r.run(ctx)
}

// memoryReleaser is Keep with its clock, CPU meter and release
// injected, so that tests decide when a period ends and how busy it was.
type memoryReleaser struct {
	ready   func() bool
	rewarm  func(context.Context)
	release func(rewarm func()) (Stats, error)
	// cpuTime returns the CPU time the process used so far; an error
	// turns the periodic releases off (an unsupported system).
	cpuTime func() (time.Duration, error)
	ticks   <-chan time.Time
	period  time.Duration
	log     zerolog.Logger
}

func (r memoryReleaser) run(ctx context.Context) {
	if !r.waitReady(ctx) {
		return
	}
	r.releaseOnce(ctx, "start-up memory released")
	last, err := r.cpuTime()
	if err != nil {
		r.log.Debug().Err(err).Msg("no CPU time to tell idleness by: memory is released once only")
		return
	}
	budget := time.Duration(float64(r.period) * idleCPUShare)
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.ticks:
		}
		now, err := r.cpuTime()
		if err != nil {
			r.log.Debug().Err(err).Msg("no CPU time to tell idleness by: periodic memory release stopped")
			return
		}
		if used := now - last; used >= budget {
			r.log.Debug().Dur("cpu", used).Msg("memory release skipped: busy")
			last = now
			continue
		}
		r.releaseOnce(ctx, "idle memory released")
		// The release's own collection is not the daemon's work.
		if last, err = r.cpuTime(); err != nil {
			return
		}
	}
}

// waitReady polls ready until it holds, then waits releaseSettle; false
// when ctx ended first.
func (r memoryReleaser) waitReady(ctx context.Context) bool {
	tick := time.NewTicker(releasePoll)
	defer tick.Stop()
	for !r.ready() {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	settle := time.NewTimer(releaseSettle)
	defer settle.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-settle.C:
		return true
	}
}

func (r memoryReleaser) releaseOnce(ctx context.Context, what string) {
	var warm func()
	if r.rewarm != nil {
		warm = func() { r.rewarm(ctx) }
	}
	st, err := r.release(warm)
	if err != nil {
		r.log.Debug().Err(err).Msg("memory only partly released")
		return
	}
	r.log.Debug().Int("segments", st.Segments).Uint64("mapped_bytes", st.Mapped).Msg(what)
}
