package priority

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// discovered is when the scheduling rules' example tasks are scored: they were
// written at 10:00 and discovered 5 s later (the scheduling rules: "within 5
// seconds").
var discovered = time.Date(2026, 1, 28, 10, 0, 5, 0, time.UTC)

func seedWeights() Weights {
	w := DefaultWeights()
	w.ImportantSenders = []string{"ceo@company.com", "legal@company.com"}
	return w
}

func TestScore(t *testing.T) {
	at := func(d time.Duration) string { return discovered.Add(d).Format(time.RFC3339Nano) }
	custom := Weights{High: 3, Medium: 2, Low: 1, Deadline2h: 300, Deadline1d: 200, Deadline1w: 100, ImportantSender: 1000,
		ImportantSenders: []string{"@company.com"}}
	tests := []struct {
		name string
		in   Input
		w    Weights
		now  time.Time
		want int
	}{
		// the scheduling rules' own examples .
		{
			// "Task A: priority=high, deadline=in 2 hours, from=ceo@company.com
			// Score: 10 (high) + 20 (< 2h) + 10 (CEO) = 40". In 2 hours as
			// the scheduling rules' example has it: due at 12:00, written at 10:00, scored
			// at discovery. (Exactly 2 h left is a row of its own below.)
			name: "seed task A = 40",
			in:   Input{Priority: "high", Deadline: "2026-01-28T12:00:00Z", From: "ceo@company.com"},
			w:    seedWeights(), now: discovered, want: 40,
		},
		{
			name: "seed task B = 10", // medium, in 3 days, client@example.com: 5 + 5 + 0
			in:   Input{Priority: "medium", Deadline: at(72 * time.Hour), From: "client@example.com"},
			w:    seedWeights(), now: discovered, want: 10,
		},
		{
			name: "seed task C = 0", // low, in 1 week, newsletter@example.com: 0 + 0 (> 1 week) + 0
			in:   Input{Priority: "low", Deadline: at(7 * 24 * time.Hour), From: "newsletter@example.com"},
			w:    seedWeights(), now: discovered, want: 0,
		},

		// Deadline bounds: strict, as in the scheduling rules' code.
		{name: "exactly 2 h left earns the 1-day weight", in: Input{Deadline: at(2 * time.Hour)}, w: seedWeights(), now: discovered, want: 10},
		{name: "just under 2 h", in: Input{Deadline: at(2*time.Hour - time.Nanosecond)}, w: seedWeights(), now: discovered, want: 20},
		{name: "past deadline is the most urgent", in: Input{Deadline: at(-3 * 24 * time.Hour)}, w: seedWeights(), now: discovered, want: 20},
		{name: "deadline now", in: Input{Deadline: at(0)}, w: seedWeights(), now: discovered, want: 20},
		{name: "exactly 1 day", in: Input{Deadline: at(24 * time.Hour)}, w: seedWeights(), now: discovered, want: 5},
		{name: "just under 1 week", in: Input{Deadline: at(7*24*time.Hour - time.Second)}, w: seedWeights(), now: discovered, want: 5},
		{name: "no deadline", in: Input{Priority: "medium"}, w: seedWeights(), now: discovered, want: 5},
		{name: "date alone means the end of that day", in: Input{Deadline: "2026-01-28"}, w: seedWeights(), now: discovered, want: 10},
		{name: "date alone, the day before", in: Input{Deadline: "2026-01-27"}, w: seedWeights(), now: discovered, want: 20},
		{name: "zone offset", in: Input{Deadline: "2026-01-28T12:30:00+01:00"}, w: seedWeights(), now: discovered, want: 20},

		// Priorities.
		{name: "upper case label", in: Input{Priority: " HIGH "}, w: seedWeights(), now: discovered, want: 10},
		{name: "no priority counts as low", in: Input{}, w: custom, now: discovered, want: 1},
		{name: "a number is used as it is", in: Input{Priority: "7"}, w: seedWeights(), now: discovered, want: 7},
		{name: "a negative number", in: Input{Priority: "-3", Deadline: at(time.Hour)}, w: seedWeights(), now: discovered, want: 17},

		// Senders.
		{name: "display-name form, any case", in: Input{From: "The CEO <CEO@Company.COM>"}, w: seedWeights(), now: discovered, want: 10},
		{name: "unknown sender", in: Input{From: "ceo@company.co"}, w: seedWeights(), now: discovered, want: 0},
		{name: "domain entry matches its addresses", in: Input{From: "legal@company.com"}, w: custom, now: discovered, want: 1001},
		{name: "domain entry does not match subdomains", in: Input{From: "x@eu.company.com"}, w: custom, now: discovered, want: 1},
		{name: "domain entry does not match a longer domain", in: Input{From: "x@company.com.evil"}, w: custom, now: discovered, want: 1},

		// Every weight configurable.
		{name: "custom weights", in: Input{Priority: "medium", Deadline: at(time.Hour), From: "a@company.com"}, w: custom, now: discovered, want: 1302},
		{name: "zero weights score nothing", in: Input{Priority: "high", Deadline: at(time.Hour), From: "ceo@company.com"}, w: Weights{}, now: discovered, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Score(tt.in, tt.w, tt.now)
			if err != nil {
				t.Fatalf("Score: %v", err)
			}
			if got != tt.want {
				b, _ := Explain(tt.in, tt.w, tt.now)
				t.Fatalf("Score = %d (%+v), want %d", got, b, tt.want)
			}
		})
	}
}

func TestScoreOrdersSeedTasks(t *testing.T) {
	// the scheduling rules: "Execution order: Task A → Task B → Task C".
	w := seedWeights()
	a, _ := Score(Input{Priority: "high", Deadline: "2026-01-28T12:00:00Z", From: "ceo@company.com"}, w, discovered)
	b, _ := Score(Input{Priority: "medium", Deadline: "2026-01-31T10:00:00Z", From: "client@example.com"}, w, discovered)
	c, _ := Score(Input{Priority: "low", Deadline: "2026-02-04T10:00:05Z", From: "newsletter@example.com"}, w, discovered)
	if !(a > b && b > c) {
		t.Fatalf("scores A %d, B %d, C %d: want A > B > C", a, b, c)
	}
}

func TestScoreErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      Input
		wantErr error
		wantMsg string
	}{
		{name: "unknown label", in: Input{Priority: "urgent"}, wantErr: ErrInvalidPriority, wantMsg: `priority: invalid priority "urgent": use high, medium, low or a whole number between -1000000 and 1000000`},
		{name: "fraction", in: Input{Priority: "7.5"}, wantErr: ErrInvalidPriority, wantMsg: `"7.5"`},
		{name: "too large", in: Input{Priority: "1000001"}, wantErr: ErrInvalidPriority, wantMsg: `"1000001"`},
		{name: "words for a deadline", in: Input{Deadline: "tomorrow"}, wantErr: ErrInvalidDeadline, wantMsg: `priority: invalid deadline "tomorrow": use RFC 3339 like 2026-01-29T09:00:00Z`},
		{name: "impossible date", in: Input{Deadline: "2026-02-30"}, wantErr: ErrInvalidDeadline, wantMsg: `"2026-02-30"`},
		{name: "American date", in: Input{Deadline: "01/29/2026"}, wantErr: ErrInvalidDeadline, wantMsg: `"01/29/2026"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Score(tt.in, DefaultWeights(), discovered)
			if !errors.Is(err, tt.wantErr) || got != 0 {
				t.Fatalf("Score = %d, %v; want 0 and %v", got, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestParseDeadline(t *testing.T) {
	nine := time.Date(2026, 1, 29, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   string
		want time.Time
	}{
		{name: "RFC 3339", in: "2026-01-29T09:00:00Z", want: nine},
		{name: "RFC 3339 with fraction", in: "2026-01-29T09:00:00.250Z", want: nine.Add(250 * time.Millisecond)},
		{name: "RFC 3339 with offset", in: "2026-01-29T10:00:00+01:00", want: nine},
		{name: "without seconds", in: "2026-01-29T09:00Z", want: nine},
		{name: "without zone is UTC", in: "2026-01-29T09:00:00", want: nine},
		{name: "without zone and seconds", in: "2026-01-29T09:00", want: nine},
		{name: "space instead of T", in: "2026-01-29 09:00", want: nine},
		{name: "space, seconds and zone", in: "2026-01-29 10:00:00+01:00", want: nine},
		{name: "surrounding spaces", in: "  2026-01-29T09:00:00Z\n", want: nine},
		{name: "date alone is the end of the day", in: "2026-01-29", want: time.Date(2026, 1, 30, 0, 0, 0, 0, time.UTC)},
		{name: "Go time text (a printed YAML timestamp)", in: "2026-01-29 09:00:00 +0000 UTC", want: nine},
		{name: "e-mail date", in: "Thu, 29 Jan 2026 10:00:00 +0100", want: nine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDeadline(tt.in)
			if err != nil {
				t.Fatalf("ParseDeadline(%q): %v", tt.in, err)
			}
			if !got.Equal(tt.want) {
				t.Fatalf("ParseDeadline(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestValidateSender(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		ok    bool
	}{
		{name: "address", entry: "ceo@company.com", ok: true},
		{name: "domain", entry: "@company.com", ok: true},
		{name: "empty", entry: " ", ok: false},
		{name: "bare domain without @", entry: "company.com", ok: false},
		{name: "at alone", entry: "@", ok: false},
		{name: "two ats", entry: "a@b@c", ok: false},
		{name: "trailing at", entry: "ceo@", ok: false},
		{name: "display name", entry: "CEO <ceo@company.com>", ok: false},
		{name: "domain with a space", entry: "@company .com", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateSender(tt.entry)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateSender(%q) = %v, want ok=%v", tt.entry, err, tt.ok)
			}
			if err != nil && (!errors.Is(err, ErrInvalidSender) || !strings.Contains(err.Error(), "use an address like ceo@company.com")) {
				t.Fatalf("error %v", err)
			}
		})
	}
}
