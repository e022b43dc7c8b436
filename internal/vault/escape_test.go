package vault

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

func TestMdText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "invoice 99.md", "invoice 99.md"},
		{"newline adds no line", "a\n## Fake heading\n- [x] fake", `a\n## Fake heading\n- \[x\] fake`},
		{"terminal escape", "a\x1b[31mred", `a\x1b\[31mred`},
		{"carriage return and tab", "a\rb\tc", `a\rb\tc`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"bidi override", "abc\u202Egpj.md", `abc\u202egpj.md`},
		{"emphasis and code", "*bold* _it_ `code`", "\\*bold\\* \\_it\\_ \\`code\\`"},
		{"link and image", "![x](http://e/) [y](z)", `\!\[x\](http://e/) \[y\](z)`},
		{"html", "<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"table cell", "a|b", `a\|b`},
		{"leading heading", "# title", `\# title`},
		{"leading quote", "> quote", `\> quote`},
		{"leading list", "- item", `\- item`},
		{"leading ordered list", "12. item", `12\. item`},
		{"entity", "&lt;", `\&lt;`},
		{"backslash", `a\b`, `a\\b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mdText(tc.in)
			if got != tc.want {
				t.Errorf("mdText(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if strings.ContainsAny(got, "\n\r\x1b") {
				t.Errorf("mdText(%q) kept a line break or escape: %q", tc.in, got)
			}
		})
	}
}

// TestDashboardIsTruthful: the time it was written, names escaped,
// subfolders and refused files with reasons, files still being written.
func TestDashboardIsTruthful(t *testing.T) {
	e := newBridgeEnv(t, Options{RescanInterval: 30 * time.Second})
	evil := "evil\x1b[2J\n## Hacked [x](javascript:e).md"
	write(t, e.path(NeedsAction, evil), "---\npriority: [broken\n---\nx\n")
	if err := os.Mkdir(e.path(NeedsAction, "Inbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, e.path(NeedsAction, "typing.md"), "Half a")
	e.pass()
	e.clock.Add(testSettle)
	write(t, e.path(NeedsAction, "typing.md"), "Half a sentence")
	e.pass()
	dash := readFileT(t, filepath.Join(e.dir, DashboardFile))
	for _, want := range []string{
		"Updated at " + e.clock.Now().UTC().Format(time.RFC3339),
		"an older time means the orchestrator is down",
		"Needs\\_Action/Inbox: a folder",
		"1 still being written",
	} {
		if !strings.Contains(dash, want) {
			t.Errorf("the dashboard lacks %q:\n%s", want, dash)
		}
	}
	if strings.Contains(dash, "\x1b") || strings.Contains(dash, "\n## Hacked") || strings.Contains(dash, "[x](javascript") {
		t.Errorf("a file name reached the dashboard unescaped:\n%q", dash)
	}
	if !strings.Contains(dash, `evil\x1b\[2J\n## Hacked \[x\](javascript:e).md: invalid frontmatter`) {
		t.Errorf("the refused file is not listed with its reason:\n%s", dash)
	}
	// Nothing changed: the time alone is refreshed once per rescan interval.
	e.clock.Add(time.Second)
	e.pass()
	if again := readFileT(t, filepath.Join(e.dir, DashboardFile)); again != dash {
		t.Errorf("rewritten within the rescan interval for nothing:\n%s", again)
	}
	e.clock.Add(30 * time.Second)
	e.pass()
	if again := readFileT(t, filepath.Join(e.dir, DashboardFile)); !strings.Contains(again, "Updated at "+e.clock.Now().UTC().Format(time.RFC3339)) {
		t.Errorf("not refreshed after the rescan interval:\n%s", again)
	}
}

// TestActivitySurvivesARestart: a new bridge (a restarted orchestrator)
// reads the recent activity back from the event log.
func TestActivitySurvivesARestart(t *testing.T) {
	e := newBridgeEnv(t, Options{})
	ctx := context.Background()
	if _, err := e.bb.Pause(ctx, "erin", "lunch", "cli"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.bb.Resume(ctx, "erin", "cli"); err != nil {
		t.Fatal(err)
	}
	fresh := NewBridge(e.bb, Options{Path: e.dir}, e.br.log)
	fresh.backfillActivity(ctx)
	got := strings.Join(fresh.activity, "\n")
	if !strings.Contains(got, "paused") || !strings.Contains(got, "resumed") {
		t.Errorf("activity after a restart: %q", got)
	}
	_ = blackboard.EventPaused
}

func readFileT(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
