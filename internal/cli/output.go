package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/termsafe"
)

// colour is an SGR colour code. Every code is two digits so that each
// coloured cell carries the same number of invisible bytes: tabwriter
// counts bytes, and equal padding in every cell keeps columns aligned.
type colour string

// Colours used by the human output.
const (
	colourNone    colour = ""
	colourDefault colour = "39"
	colourBold    colour = "01"
	colourRed     colour = "31"
	colourGreen   colour = "32"
	colourYellow  colour = "33"
	colourMagenta colour = "35"
	colourCyan    colour = "36"
	colourGrey    colour = "90"
)

// outputStyle decides how human output looks: colour on or off, and the
// clock relative times are measured against. The zero value prints plain
// text against time.Now.
type outputStyle struct {
	color bool
	now   func() time.Time
	// full shows ids whole (--full) instead of their first 8 characters.
	full bool
}

// styleFor returns the style of app's output: colour only on a terminal,
// and never with NO_COLOR set (https://no-color.org) or --no-color.
func styleFor(app *App) outputStyle {
	return outputStyle{
		color: app.IsTTY && app.env("NO_COLOR") == "" && !app.noColor,
		now:   app.Now,
		full:  app.fullIDs,
	}
}

// Now returns the style's clock reading.
func (s outputStyle) Now() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// paint wraps text in c when colour is on. With colour on, colourNone is
// painted as the default colour so that the cell still has the same
// invisible width as its coloured neighbours. Text is escaped for the
// terminal first (termsafe), so that a payload cannot smuggle its own
// escape sequences in among the colours.
func (s outputStyle) paint(c colour, text string) string {
	text = termsafe.String(text)
	if !s.color {
		return text
	}
	if c == colourNone {
		c = colourDefault
	}
	return "\x1b[" + string(c) + "m" + text + "\x1b[0m"
}

// table writes aligned columns through text/tabwriter. With colour on,
// every cell is wrapped in a colour code (the default colour when the cell
// has none), so all cells of a column carry the same invisible width and
// stay aligned.
type table struct {
	tw    *tabwriter.Writer
	style outputStyle
}

// newTable starts a table on w with the given headers.
func newTable(w io.Writer, style outputStyle, headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0), style: style}
	if len(headers) > 0 {
		cells := make([]cell, len(headers))
		for i, h := range headers {
			cells[i] = cell{text: h, colour: colourBold}
		}
		t.row(cells...)
	}
	return t
}

// cell is one table cell with an optional colour.
type cell struct {
	text   string
	colour colour
}

// row writes one row. Tabs and newlines inside a cell would break the
// layout, so they become spaces.
func (t *table) row(cells ...cell) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = t.style.paint(c.colour, oneLine(c.text))
	}
	fmt.Fprintln(t.tw, strings.Join(parts, "\t"))
}

// flush writes the table out.
func (t *table) flush() error { return t.tw.Flush() }

// oneLine replaces line breaks and tabs by spaces and escapes every other
// control character for the terminal (termsafe).
func oneLine(s string) string {
	if strings.ContainsAny(s, "\t\r\n") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return termsafe.Line(s)
}

// id renders an id for a listing: whole with --full, else its short form
// (blackboard.ShortID), which every command accepts back as a prefix.
func (s outputStyle) id(id string) string {
	if s.full {
		return id
	}
	return blackboard.ShortID(id)
}

// age renders how long before now t was, compactly: "3s", "2m", "5h",
// "4d". Future times (clock skew) count as "0s".
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// ago renders t relative to now: "just now", "3s ago", "2m ago", "in 5s".
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d > -time.Second && d < time.Second:
		return "just now"
	case d < 0:
		return "in " + age(t, now)
	}
	return age(now, t) + " ago"
}

// msTime converts Redis milliseconds to a time.
func msTime(ms int64) time.Time { return time.UnixMilli(ms) }

// stamp renders a time absolutely, with its relative age: "2024-05-01
// 14:03:22 (3m ago)".
func stamp(now time.Time, t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05") + " (" + ago(now, t) + ")"
}

// humanDuration renders a duration for people: "850ms", "12s", "3m4s",
// "2h5m".
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}
