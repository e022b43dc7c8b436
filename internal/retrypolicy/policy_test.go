package retrypolicy

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/settdev/sett/internal/tool"
)

func TestDelay(t *testing.T) {
	ms := Policy{MaxAttempts: 3, Backoff: []time.Duration{10 * time.Millisecond, 30 * time.Millisecond}}
	tests := []struct {
		name    string
		p       Policy
		attempt int
		want    time.Duration
	}{
		{name: "default after attempt 1", p: DefaultPolicy(), attempt: 1, want: time.Minute},
		{name: "default after attempt 2", p: DefaultPolicy(), attempt: 2, want: 5 * time.Minute},
		{name: "default after attempt 3", p: DefaultPolicy(), attempt: 3, want: 15 * time.Minute},
		{name: "default after attempt 4", p: DefaultPolicy(), attempt: 4, want: time.Hour},
		{name: "default after attempt 5", p: DefaultPolicy(), attempt: 5, want: 4 * time.Hour},
		{name: "the last delay repeats", p: DefaultPolicy(), attempt: 9, want: 4 * time.Hour},
		{name: "attempt 0 is read as 1", p: DefaultPolicy(), attempt: 0, want: time.Minute},
		{name: "zero policy uses the default delays", p: Policy{}, attempt: 2, want: 5 * time.Minute},
		{name: "milliseconds for tests", p: ms, attempt: 1, want: 10 * time.Millisecond},
		{name: "milliseconds, repeating", p: ms, attempt: 4, want: 30 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Delay(tt.attempt, nil); got != tt.want {
				t.Fatalf("Delay(%d) = %s, want %s", tt.attempt, got, tt.want)
			}
		})
	}
}

func TestDelayJitter(t *testing.T) {
	p := DefaultPolicy()
	rnd := rand.New(rand.NewPCG(7, 11))
	base := 5 * time.Minute
	lo, hi := time.Duration(float64(base)*(1-Jitter)), time.Duration(float64(base)*(1+Jitter))
	seen := make(map[time.Duration]bool)
	below, above := false, false
	for range 1000 {
		d := p.Delay(2, rnd)
		if d < lo || d > hi {
			t.Fatalf("Delay = %s, outside [%s, %s]", d, lo, hi)
		}
		seen[d] = true
		below = below || d < base
		above = above || d > base
	}
	if len(seen) < 900 || !below || !above {
		t.Fatalf("jitter looks wrong: %d distinct delays, some below %v, some above %v", len(seen), below, above)
	}
	// The same seed gives the same delays.
	a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	for i := 1; i <= 5; i++ {
		if x, y := p.Delay(i, a), p.Delay(i, b); x != y {
			t.Fatalf("attempt %d: %s and %s from the same seed", i, x, y)
		}
	}
}

func TestClassify(t *testing.T) {
	yes, no := true, false
	p := Policy{PermanentExitCodes: []int{2, 64}}
	tests := []struct {
		name      string
		f         FailureFacts
		transient bool
		why       string
	}{
		{name: "non-zero exit", f: FailureFacts{Kind: KindExitNonzero, ExitCode: 1}, transient: true, why: "exit_nonzero is transient"},
		{name: "timeout", f: FailureFacts{Kind: KindTimeout, ExitCode: -1}, transient: true},
		{name: "signaled", f: FailureFacts{Kind: KindSignaled, ExitCode: -1}, transient: true},
		{name: "lost lease", f: FailureFacts{Kind: KindLostLease}, transient: true},
		{name: "tool error without retryable", f: FailureFacts{Kind: KindToolError}, transient: true},
		{name: "invalid output", f: FailureFacts{Kind: KindInvalidOutput}, transient: true},
		{name: "stdout too large", f: FailureFacts{Kind: KindStdoutTooLarge, ExitCode: -1}, transient: true},
		{name: "start failed", f: FailureFacts{Kind: KindStartFailed, ExitCode: -1}, transient: false, why: "start_failed is permanent"},
		{name: "canceled", f: FailureFacts{Kind: KindCanceled, ExitCode: -1}, transient: false, why: "canceled is permanent"},
		{name: "unknown kind", f: FailureFacts{Kind: "eaten_by_grue"}, transient: true, why: `unknown failure kind "eaten_by_grue"`},
		{name: "retryable false", f: FailureFacts{Kind: KindToolError, Retryable: &no}, transient: false, why: "the tool answered retryable: false"},
		{name: "retryable false beats a transient kind", f: FailureFacts{Kind: KindTimeout, Retryable: &no}, transient: false},
		{name: "retryable true beats a permanent kind", f: FailureFacts{Kind: KindStartFailed, Retryable: &yes}, transient: true, why: "the tool answered retryable: true"},
		{name: "listed exit code", f: FailureFacts{Kind: KindExitNonzero, ExitCode: 64}, transient: false, why: "exit code 64 is in permanent_exit_codes"},
		{name: "listed exit code beats retryable true", f: FailureFacts{Kind: KindToolError, ExitCode: 2, Retryable: &yes}, transient: false, why: "exit code 2"},
		{name: "unlisted exit code", f: FailureFacts{Kind: KindExitNonzero, ExitCode: 3}, transient: true},
		{name: "shell: not executable", f: FailureFacts{Kind: KindExitNonzero, ExitCode: 126}, transient: false, why: "exit code 126 is permanent"},
		{name: "shell: not found", f: FailureFacts{Kind: KindExitNonzero, ExitCode: 127}, transient: false, why: "exit code 127 is permanent"},
		{name: "126 from a tool's error answer stays the tool's", f: FailureFacts{Kind: KindToolError, ExitCode: 126}, transient: true},
		{name: "unreadable output", f: FailureFacts{Kind: KindUnreadableOutput}, transient: false, why: "unreadable_output is permanent"},
		{name: "unreadable output, retryable true", f: FailureFacts{Kind: KindUnreadableOutput, Retryable: &yes}, transient: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			transient, why := p.Classify(tt.f)
			if transient != tt.transient || p.Transient(tt.f) != tt.transient {
				t.Fatalf("Classify = %v (%s), want %v", transient, why, tt.transient)
			}
			if !strings.Contains(why, tt.why) {
				t.Fatalf("why = %q, want it to contain %q", why, tt.why)
			}
		})
	}
}

func TestNext(t *testing.T) {
	no := false
	timeout := FailureFacts{Kind: KindTimeout, ExitCode: -1}
	tests := []struct {
		name      string
		p         Policy
		attempt   int
		f         FailureFacts
		wantAgain bool
		wantDelay time.Duration
		wantWhy   string
	}{
		{name: "first failure retried after 1m", p: DefaultPolicy(), attempt: 1, f: timeout, wantAgain: true, wantDelay: time.Minute,
			wantWhy: "attempt 1 of 5 failed (timeout is transient); attempt 2 in 1m0s"},
		{name: "fourth failure retried after 1h", p: DefaultPolicy(), attempt: 4, f: timeout, wantAgain: true, wantDelay: time.Hour},
		{name: "last attempt exhausts", p: DefaultPolicy(), attempt: 5, f: timeout, wantWhy: "attempt 5 of 5 failed (timeout is transient); no attempts left"},
		{name: "permanent is not retried", p: DefaultPolicy(), attempt: 1, f: FailureFacts{Kind: KindToolError, Retryable: &no},
			wantWhy: "attempt 1 of 5 failed (the tool answered retryable: false); not retried"},
		{name: "max_attempts 3: the second failure is retried", p: Policy{MaxAttempts: 3}, attempt: 2, f: timeout, wantAgain: true, wantDelay: 5 * time.Minute},
		{name: "max_attempts 3: the third is not", p: Policy{MaxAttempts: 3}, attempt: 3, f: timeout},
		{name: "zero policy runs once", p: Policy{}, attempt: 1, f: timeout, wantWhy: "attempt 1 of 1 failed"},
		{name: "reviewer default: retried once", p: DefaultPolicy().ForReview(false), attempt: 1, f: timeout, wantAgain: true, wantDelay: time.Minute},
		{name: "reviewer default: then no more", p: DefaultPolicy().ForReview(false), attempt: 2, f: timeout, wantWhy: "attempt 2 of 2 failed"},
		{name: "reviewer with explicit max_attempts keeps it", p: Policy{MaxAttempts: 4}.ForReview(true), attempt: 2, f: timeout, wantAgain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.p.Next(tt.attempt, tt.f, nil)
			if r.Again != tt.wantAgain || (tt.wantDelay != 0 && r.Delay != tt.wantDelay) || (!r.Again && r.Delay != 0) {
				t.Fatalf("Next = %+v, want again=%v delay=%s", r, tt.wantAgain, tt.wantDelay)
			}
			if !strings.Contains(r.Reason, tt.wantWhy) {
				t.Fatalf("Reason = %q, want it to contain %q", r.Reason, tt.wantWhy)
			}
		})
	}
}

// instantTimer is a backoff.Timer that fires at once and records the
// delays it was asked for.
type instantTimer struct {
	c      chan time.Time
	delays []time.Duration
}

func (t *instantTimer) Start(d time.Duration) {
	t.delays = append(t.delays, d)
	t.c = make(chan time.Time, 1)
	t.c <- time.Time{}
}
func (t *instantTimer) Stop()               {}
func (t *instantTimer) C() <-chan time.Time { return t.c }

func TestScheduleDrivesBackoffRetry(t *testing.T) {
	errFlaky := errors.New("flaky")
	tests := []struct {
		name       string
		p          Policy
		succeedOn  int // 0: never
		wantCalls  int
		wantDelays []time.Duration
		wantErr    bool
	}{
		{name: "fails twice then succeeds with max_attempts 3", p: Policy{MaxAttempts: 3}, succeedOn: 3, wantCalls: 3,
			wantDelays: []time.Duration{time.Minute, 5 * time.Minute}},
		{name: "exhausts the default policy", p: DefaultPolicy(), wantCalls: 5, wantErr: true,
			wantDelays: []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour}},
		{name: "one attempt, no delay", p: Policy{MaxAttempts: 1}, wantCalls: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.p.NewSchedule(nil)
			for round := range 2 { // the second round checks Reset
				calls := 0
				timer := &instantTimer{}
				err := backoff.RetryNotifyWithTimer(func() error {
					calls++
					if calls == tt.succeedOn {
						return nil
					}
					return errFlaky
				}, s, nil, timer)
				if (err != nil) != tt.wantErr || calls != tt.wantCalls || !slices.Equal(timer.delays, tt.wantDelays) {
					t.Fatalf("round %d: err %v, %d calls, delays %v; want err=%v, %d calls, delays %v",
						round, err, calls, timer.delays, tt.wantErr, tt.wantCalls, tt.wantDelays)
				}
			}
		})
	}
}

func TestFailureKindValid(t *testing.T) {
	tests := []struct {
		name string
		k    FailureKind
		want bool
	}{
		{name: "lost lease", k: KindLostLease, want: true},
		{name: "invalid output", k: KindInvalidOutput, want: true},
		{name: "unreadable output", k: KindUnreadableOutput, want: true},
		{name: "unknown", k: "oops", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.k.Valid(); got != tt.want {
				t.Fatalf("Valid() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFailureKindsCoverTheToolRunner keeps the kinds in step with the
// runner's, so that a tool.FailureKind converts to a known kind.
func TestFailureKindsCoverTheToolRunner(t *testing.T) {
	for _, k := range tool.AllFailureKinds() {
		t.Run(string(k), func(t *testing.T) {
			if !FailureKind(k).Valid() {
				t.Fatalf("tool failure kind %q is not a retrypolicy kind", k)
			}
		})
	}
}
