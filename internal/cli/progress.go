package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/termsafe"
	"github.com/settdev/sett/internal/textcut"
)

// progressDetailMax bounds the detail shown on a live line, so that a
// line never wraps on a narrow terminal (a wrapped line would break the
// redraw, which moves the cursor up one row per component).
const progressDetailMax = 60

// progressView shows the progress of `sett up`, one line per component.
// On a terminal (live) it redraws every line in place on each update;
// otherwise it prints a line each time a component changes state, which
// reads well in a log. Safe for concurrent use: runtimes may report from
// several goroutines.
type progressView struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	style outputStyle
	order []string
	last  map[string]runtime.Progress
	drawn int // lines drawn by the last redraw (live)
}

// newProgressView renders on w, live when w is a terminal, with colour as
// style says.
func newProgressView(w io.Writer, live bool, style outputStyle) *progressView {
	return &progressView{w: w, live: live, style: style, last: map[string]runtime.Progress{}}
}

// Update records one report and renders it.
func (v *progressView) Update(p runtime.Progress) {
	v.mu.Lock()
	defer v.mu.Unlock()
	prev, seen := v.last[p.Component]
	if !seen {
		v.order = append(v.order, p.Component)
	}
	v.last[p.Component] = p
	if v.live {
		v.redraw()
		return
	}
	if seen && prev.State == p.State {
		return
	}
	fmt.Fprintln(v.w, v.line(p, 0))
}

// redraw moves the cursor back over the lines drawn before and draws
// every component again.
func (v *progressView) redraw() {
	if v.drawn > 0 {
		fmt.Fprintf(v.w, "\x1b[%dA", v.drawn)
	}
	width := 0
	for _, c := range v.order {
		width = max(width, len(c))
	}
	for _, c := range v.order {
		fmt.Fprintf(v.w, "\r\x1b[2K%s\n", v.line(v.last[c], width))
	}
	v.drawn = len(v.order)
}

// line renders one component: name, state, detail.
func (v *progressView) line(p runtime.Progress, width int) string {
	width = max(width, 12)
	detail := termsafe.Line(p.Detail)
	if v.live {
		detail = textcut.Runes(detail, progressDetailMax)
	}
	s := fmt.Sprintf("  %-*s  %s", width, p.Component, v.state(p.State))
	if detail != "" {
		s += "  " + detail
	}
	return s
}

// state renders a state word, with a mark and a colour on a terminal.
func (v *progressView) state(state string) string {
	padded := fmt.Sprintf("%-8s", state)
	if !v.live {
		return padded
	}
	mark, c := "…", colourYellow
	switch state {
	case "ready":
		mark, c = "✓", colourGreen
	case "failed":
		mark, c = "✗", colourRed
	}
	return v.style.paint(c, mark+" "+padded)
}
