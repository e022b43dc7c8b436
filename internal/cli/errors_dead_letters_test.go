package cli

import (
	"strings"
	"testing"
	"time"
)

func TestWriteDeadLetters(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := WriteDeadLetters(&b, nil); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, ": 0") || !strings.Contains(got, "none") {
		t.Errorf("empty section:\n%s", got)
	}
	b.Reset()
	views := []DeadLetterView{{ID: "1-0", At: time.UnixMilli(1).UTC(), Event: "bids_complete", ClaimID: "c1",
		Error: "blackboard: corrupt record", Attempts: 5}}
	if err := WriteDeadLetters(&b, views); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{": 1", "bids_complete", "claim c1", "5", "blackboard: corrupt record"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, b.String())
		}
	}
}
