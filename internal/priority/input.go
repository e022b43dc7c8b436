package priority

import (
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"
)

// Input is what a goal says about its urgency, as written in its
// frontmatter or on the command line. Every field may be empty.
type Input struct {
	// Priority is high, medium, low (any case), a whole number, or ""
	// (low).
	Priority string
	// Deadline is when the work is due, in one of the forms of the package
	// documentation; "" for none.
	Deadline string
	// From is the sender: an address or "Name <address>"; "" for none.
	From string
}

// Breakdown is a score and its parts.
type Breakdown struct {
	Priority, Deadline, Sender int
	Total                      int
}

// Score returns the priority score of in at time now under w (see the
// package documentation). It returns an error wrapping ErrInvalidPriority
// or ErrInvalidDeadline, naming the value, when in cannot be read.
func Score(in Input, w Weights, now time.Time) (int, error) {
	b, err := Explain(in, w, now)
	return b.Total, err
}

// Explain is Score with the parts of the score.
func Explain(in Input, w Weights, now time.Time) (Breakdown, error) {
	var b Breakdown
	var err error
	if b.Priority, err = ParsePriority(in.Priority, w); err != nil {
		return Breakdown{}, err
	}
	if strings.TrimSpace(in.Deadline) != "" {
		deadline, err := ParseDeadline(in.Deadline)
		if err != nil {
			return Breakdown{}, err
		}
		b.Deadline = deadlinePoints(deadline.Sub(now), w)
	}
	if w.IsImportant(in.From) {
		b.Sender = w.ImportantSender
	}
	b.Total = b.Priority + b.Deadline + b.Sender
	return b, nil
}

// deadlinePoints scores the time left before a deadline; strict bounds, as
// in the scheduling rules ("hours_until_deadline < 2").
func deadlinePoints(left time.Duration, w Weights) int {
	switch {
	case left < 2*time.Hour: // past deadlines included
		return w.Deadline2h
	case left < 24*time.Hour:
		return w.Deadline1d
	case left < 7*24*time.Hour:
		return w.Deadline1w
	}
	return 0
}

// ParsePriority returns the points of a priority: the weight of high,
// medium or low (any case, trimmed; "" is low), or the value of a whole
// number between -MaxWeight and MaxWeight. It returns an error wrapping
// ErrInvalidPriority for anything else.
func ParsePriority(s string, w Weights) (int, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "high":
		return w.High, nil
	case "medium":
		return w.Medium, nil
	case "low", "":
		return w.Low, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < -MaxWeight || n > MaxWeight {
		return 0, fmt.Errorf("%w %q: use high, medium, low or a whole number between %d and %d", ErrInvalidPriority, s, -MaxWeight, MaxWeight)
	}
	return n, nil
}

// deadlineLayouts are the forms ParseDeadline tries, in order; a layout
// without a zone is read as UTC.
var deadlineLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02 15:04:05.999999999 -0700 MST", // time.Time.String
}

// dateLayout is a date alone: due by the end of that day.
const dateLayout = "2006-01-02"

// ParseDeadline reads a deadline in one of the forms of the package
// documentation. It returns an error wrapping ErrInvalidDeadline, naming
// the value and the accepted forms, when it cannot.
func ParseDeadline(s string) (time.Time, error) {
	t := strings.TrimSpace(s)
	for _, layout := range deadlineLayouts {
		if d, err := time.Parse(layout, t); err == nil {
			return d, nil
		}
	}
	if d, err := time.Parse(dateLayout, t); err == nil {
		return d.AddDate(0, 0, 1), nil // the end of that day: midnight after it
	}
	if d, err := mail.ParseDate(t); err == nil {
		return d, nil
	}
	return time.Time{}, fmt.Errorf("%w %q: use RFC 3339 like 2026-01-29T09:00:00Z (or +01:00 for a zone), a date like 2026-01-29, or an e-mail date like \"Thu, 29 Jan 2026 09:00:00 +0000\"", ErrInvalidDeadline, s)
}
