package writeretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

func TestUntil(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// errs are op's answers in order; the last one repeats.
		errs     []error
		deadline time.Duration // zero: none
		want     error
		calls    int // exact number of calls; -1: at least two
	}{
		{"succeeds at once", []error{nil}, 0, nil, 1},
		{"transient failures then success", []error{io.EOF, io.ErrUnexpectedEOF, nil}, 0, nil, 3},
		{"refusal is not retried", []error{fmt.Errorf("claim x: %w", blackboard.ErrStaleStatus)}, 0, blackboard.ErrStaleStatus, 1},
		{"deadline bounds the retries", []error{io.EOF}, 200 * time.Millisecond, io.EOF, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls, notified := 0, 0
			var deadline time.Time
			if tc.deadline > 0 {
				deadline = time.Now().Add(tc.deadline)
			}
			err := Until(t.Context(), deadline, func(ctx context.Context) error {
				e := tc.errs[min(calls, len(tc.errs)-1)]
				calls++
				return e
			}, func(error, time.Duration) { notified++ })
			if !errors.Is(err, tc.want) {
				t.Fatalf("Until = %v, want %v", err, tc.want)
			}
			if tc.calls >= 0 && calls != tc.calls {
				t.Errorf("op called %d times, want %d", calls, tc.calls)
			}
			if tc.calls < 0 && calls < 2 {
				t.Errorf("op called %d times, want retries until the deadline", calls)
			}
			if want := calls - 1; tc.want == nil && notified != want {
				t.Errorf("notified %d times, want %d", notified, want)
			}
		})
	}
}

func TestUntilStopsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	err := Until(ctx, time.Time{}, func(context.Context) error {
		calls++
		if calls == 3 {
			cancel()
		}
		return io.EOF
	}, nil)
	if err == nil || calls != 3 {
		t.Fatalf("Until = %v after %d calls, want an error after 3", err, calls)
	}
}
