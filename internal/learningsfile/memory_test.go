package learningsfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

func learning(typ, title, text string) blackboard.Learning {
	return blackboard.Learning{
		ID: blackboard.NewID(), AtMs: time.Date(2026, 2, 16, 14, 30, 0, 999e6, time.UTC).UnixMilli(),
		ArtefactType: typ, Title: title, Text: text, Source: blackboard.LearningFromReason,
	}
}

func TestRenderLineIsSeedFormat(t *testing.T) {
	got := RenderLine(learning("Plan", "Invoice #99", "Don't offer payment timeline commitments without checking accounting first. Stick to acknowledging receipt only."))
	want := `- **2026-02-16T14:30:00Z** — Rejected plan for "Invoice #99": Don't offer payment timeline commitments without checking accounting first. Stick to acknowledging receipt only.`
	if got != want {
		t.Fatalf("RenderLine:\n got %s\nwant %s", got, want)
	}
}

func TestRenderLineKeepsEverythingOnOneLine(t *testing.T) {
	tests := []struct {
		name string
		l    blackboard.Learning
		want string
	}{
		{"multi-line learning", learning("CodeChange", "Fix\nlogin", "first\n\n  second\tthird"),
			`- **2026-02-16T14:30:00Z** — Rejected code change for "Fix login": first second third`},
		{"quotes in the title", learning("Plan", `The "big" one`, "x"),
			`- **2026-02-16T14:30:00Z** — Rejected plan for "The 'big' one": x`},
		{"empty title and text", learning("Plan", " ", ""),
			`- **2026-02-16T14:30:00Z** — Rejected plan for "untitled task": (no learning text)`},
		{"no type", learning("", "T", "x"),
			`- **2026-02-16T14:30:00Z** — Rejected work for "T": x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RenderLine(tt.l); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestHumaniseType(t *testing.T) {
	for in, want := range map[string]string{
		"Plan": "plan", "CodeChange": "code change", "GoalDefined": "goal defined", "APISpec": "api spec",
		"release_note": "release note", "HTTPServer2Config": "http server2 config", "": "", "already lower": "already lower",
		"MaxIterationsExceeded": "max iterations exceeded",
	} {
		if got := HumaniseType(in); got != want {
			t.Errorf("HumaniseType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderAndCount(t *testing.T) {
	ls := []blackboard.Learning{learning("Plan", "a", "one"), learning("Plan", "b", "two")}
	text := Render(ls)
	if !strings.HasPrefix(text, Template) {
		t.Fatalf("Render does not start with the template:\n%s", text)
	}
	if n := Count(text); n != 2 {
		t.Fatalf("Count = %d, want 2 in:\n%s", n, text)
	}
	if n := Count(Template); n != 0 {
		t.Fatalf("Count(Template) = %d", n)
	}
	if !IsTemplate(Template+"\n\n") || IsTemplate(text) {
		t.Fatal("IsTemplate is wrong")
	}
	human := text + "\nSome rule of my own.\n- a plain bullet\n"
	if n := Count(human); n != 2 {
		t.Fatalf("human lines counted: %d", n)
	}
}

func TestWarningPastFifty(t *testing.T) {
	if w := Warning(WarnAbove); w != "" {
		t.Fatalf("Warning(50) = %q, want none", w)
	}
	w := Warning(51)
	if !strings.Contains(w, "51 learnings") || !strings.Contains(w, "more than 50") {
		t.Fatalf("Warning(51) = %q", w)
	}
}

func TestAppendCreatesFromTemplate(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	line := RenderLine(learning("Plan", "Invoice #99", "Be brief."))
	if err := Append(path, line); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := Template + line + "\n"; string(got) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
}

func TestAppendPreservesWhatTheHumanWrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	human := "# My memory\n\nI reordered this and removed the template.\n- **2025-01-01T00:00:00Z** — kept by hand" // no final newline
	if err := os.WriteFile(path, []byte(human), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, "- new line\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := human + "\n- new line\n"; string(got) != want {
		t.Fatalf("file:\n%q\nwant:\n%q", got, want)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("permissions %v, want the human's 0640 kept", fi.Mode().Perm())
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left behind: %v", leftovers)
	}
}

func TestAppendRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.md")
	if err := os.WriteFile(target, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, "- l"); err == nil {
		t.Fatal("Append wrote through a symbolic link")
	}
	if got, _ := os.ReadFile(target); string(got) != "x\n" {
		t.Fatalf("link target changed: %q", got)
	}
}

func TestAppendNeverLosesALine(t *testing.T) {
	// Appends from several goroutines would be a misuse (one writer), but
	// serialised appends must each land exactly once.
	path := filepath.Join(t.TempDir(), FileName)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err := Append(path, RenderLine(learning("Plan", "t", strings.Repeat("x", i+1)))); err != nil && !errors.Is(err, ErrBusy) {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	data, _ := os.ReadFile(path)
	if n := Count(string(data)); n != 20 {
		t.Fatalf("%d learnings after 20 appends:\n%s", n, data)
	}
}

func TestReplaceIfUnchangedSeesAHumanSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, before, err := readStamped(path)
	if err != nil {
		t.Fatal(err)
	}
	// The human saves between Append's read and its rename.
	if err := os.WriteFile(path, []byte("v2 by the human\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok, err := replaceIfUnchanged(path, []byte("v1\n- appended\n"), before)
	if err != nil || ok {
		t.Fatalf("replaceIfUnchanged = %v, %v; want no write", ok, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "v2 by the human\n" {
		t.Fatalf("the human's save was overwritten: %q", got)
	}
	// A file that appeared after Append saw none is not overwritten either.
	fresh := filepath.Join(filepath.Dir(path), "new.md")
	if err := os.WriteFile(fresh, []byte("human\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := replaceIfUnchanged(fresh, []byte(Template), nil); err != nil || ok {
		t.Fatalf("replaceIfUnchanged over a new file = %v, %v", ok, err)
	}
}

func TestHandWritten(t *testing.T) {
	rec := blackboard.Learning{AtMs: 1714560000000, ArtefactType: "Plan", Title: "Add login", Text: "name the tests"}
	text := Template + RenderLine(rec) + "\n" +
		"- Always run the linter before a commit.\n" +
		"Some prose that is no list item.\n" +
		"  * Prefer small pull requests\n"
	got := HandWritten(text, []blackboard.Learning{rec})
	want := []string{"Always run the linter before a commit.", "Prefer small pull requests"}
	if len(got) != len(want) {
		t.Fatalf("HandWritten = %+v, want %q", got, want)
	}
	for i, l := range got {
		if l.Text != want[i] || l.Source != SourceHandWritten {
			t.Errorf("learning %d = %+v, want %q from %s", i, l, want[i], SourceHandWritten)
		}
	}
	if got := HandWritten(Render([]blackboard.Learning{rec}), []blackboard.Learning{rec}); len(got) != 0 {
		t.Errorf("a file Sett wrote alone: %+v, want no hand-written learnings", got)
	}
}
