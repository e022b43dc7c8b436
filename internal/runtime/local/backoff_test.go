package local

import (
	"testing"
	"time"
)

func TestBackoffDelayDoublesUpToMax(t *testing.T) {
	tests := []struct {
		name   string
		streak int
		want   time.Duration
	}{
		{"zero streak counts as the first exit", 0, 100 * time.Millisecond},
		{"first exit", 1, 100 * time.Millisecond},
		{"second exit", 2, 200 * time.Millisecond},
		{"third exit", 3, 400 * time.Millisecond},
		{"seventh exit", 7, 6400 * time.Millisecond},
		{"eighth exit reaches the cap", 8, 10 * time.Second},
		{"far past the cap does not overflow", 1000, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultBackoff.Delay(tt.streak); got != tt.want {
				t.Errorf("Delay(%d) = %s, want %s", tt.streak, got, tt.want)
			}
		})
	}
}

func TestBackoffStreakResetsAfterLongUptime(t *testing.T) {
	tests := []struct {
		name   string
		prev   int
		uptime time.Duration
		want   int
	}{
		{"first quick exit", 0, time.Second, 1},
		{"another quick exit", 3, 29 * time.Second, 4},
		{"exit after the reset uptime starts over", 5, 30 * time.Second, 1},
		{"exit long after starts over", 9, time.Hour, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultBackoff.Streak(tt.prev, tt.uptime); got != tt.want {
				t.Errorf("Streak(%d, %s) = %d, want %d", tt.prev, tt.uptime, got, tt.want)
			}
		})
	}
}

func TestBackoffSequenceOfCrashes(t *testing.T) {
	// A component that crashes at once four times, then runs a minute and
	// crashes again: 100ms, 200ms, 400ms, 800ms, then 100ms again.
	uptimes := []time.Duration{0, time.Millisecond, 0, 0, time.Minute}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 100 * time.Millisecond}
	streak := 0
	for i, up := range uptimes {
		streak = DefaultBackoff.Streak(streak, up)
		if got := DefaultBackoff.Delay(streak); got != want[i] {
			t.Errorf("crash %d (uptime %s): delay %s, want %s", i+1, up, got, want[i])
		}
	}
}

func TestChildStatesAreValid(t *testing.T) {
	for _, s := range AllChildStates() {
		if !s.Valid() {
			t.Errorf("%q is listed but not valid", s)
		}
	}
	if ChildState("exploded").Valid() {
		t.Error(`"exploded" is valid`)
	}
}
