package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/textcut"
)

func (c *Console) funcs() template.FuncMap {
	return template.FuncMap{
		// u prefixes a console path with the base path.
		"u":        func(p string) string { return c.base + p },
		"short":    blackboard.ShortID,
		"ellipsis": ellipsis,
		"ago":      func(ms int64) string { return ago(c.o.Now(), ms) },
		"dur":      func(ms int64) string { return (time.Duration(ms) * time.Millisecond).Round(time.Second).String() },
		"when":     func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05") },
		"readOnly": func() bool { return c.o.ReadOnly },
	}
}

// ellipsis cuts s to n runes on one line.
func ellipsis(s string, n int) string {
	return textcut.Runes(strings.Join(strings.Fields(s), " "), n)
}

func ago(now time.Time, ms int64) string {
	if ms == 0 {
		return ""
	}
	d := now.Sub(time.UnixMilli(ms))
	suffix := " ago"
	if d < 0 {
		d, suffix = -d, " from now"
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds%s", int(d.Seconds()), suffix)
	case d < time.Hour:
		return fmt.Sprintf("%dm%s", int(d.Minutes()), suffix)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%s", int(d.Hours()), suffix)
	}
	return fmt.Sprintf("%dd%s", int(d.Hours()/24), suffix)
}
