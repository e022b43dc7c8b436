package daemon

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/startupmem"
)

// Timing of the one release of start-up memory (startupmem.Release).
const (
	// releasePoll is how often readiness is checked until it first holds.
	releasePoll = 50 * time.Millisecond
	// releaseSettle lets the last start-up steps after readiness (the
	// first reads of the loops, leader election) run before the release,
	// so their pages are not mapped back at once.
	releaseSettle = 500 * time.Millisecond
)

// ReleaseStartupMemory waits until ready first reports true, lets start-up
// settle, and then gives back the memory only start-up needed: most of the
// executable's mapped pages and the heap's start-up garbage. rewarm, when
// not nil, runs the daemon's periodic work once between the collection
// and the drop of the pages (startupmem.Release says why). It runs once;
// ctx ending first cancels it. Failures are logged at debug level: they
// cost memory, never correctness.
func ReleaseStartupMemory(ctx context.Context, ready func() bool, rewarm func(context.Context), log zerolog.Logger) {
	tick := time.NewTicker(releasePoll)
	defer tick.Stop()
	for !ready() {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	settle := time.NewTimer(releaseSettle)
	defer settle.Stop()
	select {
	case <-ctx.Done():
		return
	case <-settle.C:
	}
	var warm func()
	if rewarm != nil {
		warm = func() { rewarm(ctx) }
	}
	st, err := startupmem.Release(warm)
	if err != nil {
		log.Debug().Err(err).Msg("start-up memory only partly released")
		return
	}
	log.Debug().Int("segments", st.Segments).Uint64("mapped_bytes", st.Mapped).Msg("start-up memory released")
}
