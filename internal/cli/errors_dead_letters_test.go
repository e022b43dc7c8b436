package cli

import (
	"strings"
	"testing"
	"time"
)

func TestErrorsShowDeadLetters(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	writeErrors(&b, outputStyle{}, &errorsReport{})
	if got := b.String(); !strings.Contains(got, "Dead letters (events that failed too many times) (0)") {
		t.Errorf("empty dead-letter section missing:\n%s", got)
	}
	b.Reset()
	r := &errorsReport{DeadLetters: []DeadLetterView{{ID: "1-0", At: time.UnixMilli(1).UTC(), Event: "bids_complete",
		ClaimID: "c1c1c1c1-0000", Error: "blackboard: corrupt record\x1b[2J", Attempts: 5}}}
	writeErrors(&b, outputStyle{}, r)
	for _, want := range []string{"(1)", "bids_complete", "claim c1c1c1c1", "5", "blackboard: corrupt record"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("an escape sequence in an error reached the terminal:\n%q", b.String())
	}
}
