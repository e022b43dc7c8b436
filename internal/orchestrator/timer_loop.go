package orchestrator

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
)

// maxTimerSleep bounds how long the timer loop sleeps without looking, so
// that timers armed by another process are never missed for long.
const maxTimerSleep = 5 * time.Second

// timerVisibility is how long a popped timer stays hidden before it fires
// again: a timer is removed only once its effect is stored (AckTimer), so
// one popped by a leader that died fires again after this.
const timerVisibility = 30 * time.Second

// TimerLoop fires the durable timers (bid deadlines, lease checks) in the
// sorted set: it sleeps until the earliest one is due or until a new timer
// is armed, takes the due ones atomically (hiding them for a visibility
// timeout) and advances their claims with lease checks on, removing each
// timer only once its effect is stored. No timer is lost to a restart:
// they live in Redis, and one taken by a leader that then died fires again.
type TimerLoop struct {
	bb       *blackboard.Client
	disp     *Dispatcher
	advancer *ClaimAdvancer
	epoch    func() int64
	log      zerolog.Logger
	wake     chan time.Duration
}

// TimerLoopParams is what NewTimerLoop wires together.
type TimerLoopParams struct {
	Client     *blackboard.Client
	Dispatcher *Dispatcher
	Advancer   *ClaimAdvancer
	// Epoch reports the leader epoch timers are popped under.
	Epoch func() int64
	// Log has no component; the loop adds its own.
	Log zerolog.Logger
}

// NewTimerLoop wires the loop.
func NewTimerLoop(p TimerLoopParams) *TimerLoop {
	return &TimerLoop{bb: p.Client, disp: p.Dispatcher, advancer: p.Advancer, epoch: p.Epoch,
		log: p.Log.With().Str("component", "timer_loop").Logger(), wake: make(chan time.Duration, 1)}
}

// Armed tells the loop that a timer fires in d; it wakes up earlier if it
// was going to sleep longer.
func (l *TimerLoop) Armed(d time.Duration) {
	select {
	case l.wake <- d:
	default:
		// A wake-up is already pending; the loop re-reads the earliest
		// due time from Redis when it wakes, so none is lost.
	}
}

// Run fires timers until ctx ends.
func (l *TimerLoop) Run(ctx context.Context) error {
	sleep := time.Duration(0)
	for {
		timer := time.NewTimer(sleep)
	wait:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil
			case <-timer.C:
				break wait
			case d := <-l.wake:
				if d < sleep {
					timer.Stop()
					timer = time.NewTimer(d)
					sleep = d
				}
			}
		}
		due, err := l.bb.PopTimers(ctx, l.epoch(), 256, timerVisibility)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			l.log.Warn().Err(err).Msg("reading timers failed; retrying")
			sleep = time.Second
			continue
		}
		for _, id := range due.ClaimIDs {
			claimID := id
			l.disp.Submit(ctx, claimID, func(ctx context.Context) {
				err := l.advancer.Advance(ctx, claimID, "", true)
				if err == nil {
					// The effect is stored: now the timer may go (unless
					// the advance re-armed it for later).
					if _, aerr := l.bb.AckTimer(ctx, l.epoch(), claimID, due.VisibleAgainMs); aerr != nil && ctx.Err() == nil {
						l.log.Warn().Err(aerr).Str("claim_id", claimID).Msg("removing a fired timer failed; it fires again (harmless)")
					}
					return
				}
				if ctx.Err() == nil {
					l.log.Warn().Err(err).Str("claim_id", claimID).Msg("timer handler failed; re-arming in 1s")
					if aerr := l.bb.ArmTimer(ctx, claimID, due.NowMs+1000); aerr != nil {
						l.log.Error().Err(aerr).Str("claim_id", claimID).Msg("re-arming timer failed; it fires again after the visibility timeout")
					}
				}
			})
		}
		switch {
		case len(due.ClaimIDs) == 256:
			sleep = 0 // more may be due
		case due.NextDueMs < 0:
			sleep = maxTimerSleep
		default:
			sleep = time.Duration(due.NextDueMs-due.NowMs) * time.Millisecond
			if sleep > maxTimerSleep {
				sleep = maxTimerSleep
			}
			if sleep < 0 {
				sleep = 0
			}
		}
	}
}
