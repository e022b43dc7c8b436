package orchestrator

import (
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

func TestReleasableClaims(t *testing.T) {
	for _, c := range []struct {
		name   string
		counts blackboard.SchedulerCounts
		limit  int
		want   int64
	}{
		{"no limit: every waiting claim", blackboard.SchedulerCounts{Running: 3, Waiting: 10000}, 0, 10000},
		{"limit: the free slots only", blackboard.SchedulerCounts{Running: 3, Waiting: 10000}, 8, 5},
		{"limit: fewer waiting than free slots", blackboard.SchedulerCounts{Running: 1, Waiting: 2}, 8, 2},
		{"limit: every slot held", blackboard.SchedulerCounts{Running: 8, Waiting: 10000}, 8, 0},
		{"limit lowered below the running claims", blackboard.SchedulerCounts{Running: 12, Waiting: 5}, 8, 0},
		{"nothing waiting", blackboard.SchedulerCounts{Running: 0, Waiting: 0}, 8, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := releasableClaims(c.counts, c.limit); got != c.want {
				t.Fatalf("releasableClaims(%+v, %d) = %d, want %d", c.counts, c.limit, got, c.want)
			}
		})
	}
}
