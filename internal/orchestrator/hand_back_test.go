package orchestrator

import "testing"

func TestGrantHandedBack(t *testing.T) {
	for _, c := range []struct {
		name          string
		mark, current string
		handBacks     int
		want          bool
	}{
		{"no mark: the lease lapsed", "", "1", 0, false},
		{"mark of the current grant", "1", "1", 0, true},
		{"mark of a hand-back's regrant", "1.1", "1.1", 1, true},
		{"mark of an older grant", "1", "2", 0, false},
		{"hand-backs used up", "1.10", "1.10", maxHandBacks, false},
		{"last hand-back allowed", "1.9", "1.9", maxHandBacks - 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := grantHandedBack(c.mark, c.current, c.handBacks); got != c.want {
				t.Errorf("grantHandedBack(%q, %q, %d) = %v, want %v", c.mark, c.current, c.handBacks, got, c.want)
			}
		})
	}
}
