package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/learningsfile"
	"github.com/settdev/sett/internal/priority"
)

func TestScaffoldIsIdempotentAndKeepsFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	created, err := Scaffold(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 1+len(Folders())+3 {
		t.Errorf("created %d paths: %v", len(created), created)
	}
	for _, f := range Folders() {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || !fi.IsDir() {
			t.Errorf("folder %s: %v", f, err)
		}
	}
	mem, _ := os.ReadFile(filepath.Join(dir, AgentMemoryFile))
	if string(mem) != learningsfile.Template {
		t.Errorf("Agent_Memory.md is not the learning loop's starter:\n%s", mem)
	}
	edited := "# Agent Memory\n\nmine\n"
	if err := os.WriteFile(filepath.Join(dir, AgentMemoryFile), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, Done)); err != nil {
		t.Fatal(err)
	}
	again, err := Scaffold(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || filepath.Base(again[0]) != Done {
		t.Errorf("second scaffold created %v, want only the missing Done/", again)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, AgentMemoryFile)); string(got) != edited {
		t.Errorf("scaffold changed an existing file:\n%s", got)
	}
}

func TestScaffoldRefusesAFileInPlaceOfAFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, Rejected), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Scaffold(dir); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("err %v, want one naming the file in the way", err)
	}
}

func TestDocKeepsKeysAndOrder(t *testing.T) {
	in := "---\nsubject: \"Invoice #99\"\nmine: keep me\npriority: high\n---\nBody line.\n"
	d, err := ParseDoc([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if d.Get("subject") != "Invoice #99" || d.Get("priority") != "high" || strings.TrimSpace(d.Body) != "Body line." {
		t.Fatalf("parsed %v body %q", d.Map(), d.Body)
	}
	d.Set("workflow_id", "abc")
	d.Set("state", "running")
	d.Set("flag", "true")
	out := string(d.Render())
	again, err := ParseDoc([]byte(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if again.Get("mine") != "keep me" || again.Get("workflow_id") != "abc" || again.Get("flag") != "true" || again.Get("subject") != "Invoice #99" {
		t.Errorf("round trip lost keys:\n%s", out)
	}
	if i, j := strings.Index(out, "subject"), strings.Index(out, "workflow_id"); i > j {
		t.Errorf("order changed:\n%s", out)
	}
}

func TestDocRefusals(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"broken yaml", "---\npriority: [high\n---\nx\n", "invalid frontmatter"},
		{"list value", "---\nfrom: [a, b]\n---\nx\n", "single value"},
		{"not a mapping", "---\n- a\n---\nx\n", "key: value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseDoc([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	d, err := ParseDoc([]byte("No frontmatter at all.\n"))
	if err != nil || len(d.Map()) != 0 || !strings.Contains(d.Body, "No frontmatter") {
		t.Errorf("plain file: %v %v", d, err)
	}
}

func TestIgnored(t *testing.T) {
	for name, want := range map[string]bool{
		"task.md": false, "Task.MD": false, ".hidden.md": true, "notes.txt": true, "~lock.md": true,
		"a.sync-conflict-20260101-1.md": true, "plan (conflicted copy).md": true, "x.tmp.md": true,
		"Untitled (Conflict 2).md": true,
	} {
		if got := Ignored(name); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestReadFileRefusals(t *testing.T) {
	root := t.TempDir()
	na := filepath.Join(root, NeedsAction)
	if err := os.Mkdir(na, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "x.md")
	_ = os.WriteFile(outside, []byte("x"), 0o644)
	_ = os.WriteFile(filepath.Join(root, "in.md"), []byte("x"), 0o644)
	_ = os.WriteFile(filepath.Join(na, "big.md"), []byte(strings.Repeat("a", 2000)), 0o644)
	_ = os.WriteFile(filepath.Join(na, "bin.md"), []byte{0xff, 0xfe}, 0o644)
	_ = os.WriteFile(filepath.Join(na, "yaml.md"), []byte("---\na: [\n---\n"), 0o644)
	_ = os.WriteFile(filepath.Join(na, "ok.md"), []byte("---\npriority: low\n---\nDo it.\n"), 0o644)
	_ = os.Symlink(outside, filepath.Join(na, "out.md"))
	_ = os.Symlink(filepath.Join(root, "in.md"), filepath.Join(na, "in.md"))
	for name, want := range map[string]string{
		"big.md": "too large", "bin.md": "UTF-8", "yaml.md": "invalid frontmatter",
		"out.md": "escapes the vault", "in.md": "symbolic link", "ok.md": "",
	} {
		f, reason := readFile(root, na, name, 1024)
		if !strings.Contains(reason, want) || (want == "" && (reason != "" || f == nil)) {
			t.Errorf("%s: reason %q, want %q", name, reason, want)
		}
	}
	if f, reason := readFile(root, na, "gone.md", 1024); f != nil || reason != "" {
		t.Errorf("a vanished file: %v %q, want nothing", f, reason)
	}
}

func TestParseTask(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) *vaultFile {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		f, reason := readFile(root, root, name, 1<<20)
		if reason != "" {
			t.Fatal(reason)
		}
		return f
	}
	now := time.Date(2026, 1, 28, 10, 0, 0, 0, time.UTC)
	w := priority.DefaultWeights()
	f := write("a.md", "---\npriority: high\ndeadline: 2026-01-28T11:00:00Z\nfrom: ceo@company.com\nsubject: Board deck\napproval_timeout: 30m\n---\nPrepare the deck.\n")
	tk, err := parseTask(f, w, now)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := priority.Score(priority.Input{Priority: "high", Deadline: "2026-01-28T11:00:00Z", From: "ceo@company.com"}, w, now)
	g := tk.Goal
	if tk.Score != want || g.Priority != want || g.Metadata["subject"] != "Board deck" || g.Metadata["approval_timeout"] != "30m" ||
		g.Metadata["priority"] != "high" || g.Payload != "Prepare the deck." || g.Summary != "Board deck" || !g.IsGoal() {
		t.Errorf("task %d (want %d), goal %+v", tk.Score, want, g)
	}
	if again, _ := parseTask(f, w, now); again.Goal.ID != g.ID {
		t.Errorf("the goal id of one file changed: %s, %s", g.ID, again.Goal.ID)
	}
	g2 := write("b.md", "---\npriority: high\ndeadline: 2026-01-28T11:00:00Z\nfrom: ceo@company.com\nsubject: Board deck\napproval_timeout: 30m\n---\nPrepare the deck.\n")
	if t2, _ := parseTask(g2, w, now); t2.Goal.ID == g.ID {
		t.Error("two files share a goal id")
	}
	for text, wantErr := range map[string]string{
		"---\npriority: soonish\n---\nx\n":       "priority",
		"---\ndeadline: next tuesday\n---\nx\n":  "deadline",
		"---\napproval_timeout: a day\n---\nx\n": "approval_timeout",
		"---\nsubject: nothing to do\n---\n  \n": "no instructions",
	} {
		if _, err := parseTask(write("c.md", text), w, now); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: err %v, want %q", text, err, wantErr)
		}
	}
}

func TestSectionText(t *testing.T) {
	body := "# Title\n\n## Payload\n\nplan\n\n## Reason\n\n<!-- say why -->\nToo vague.\nName the steps.\n\n## After\nx\n"
	if got := sectionText(body, "Reason"); got != "Too vague.\nName the steps." {
		t.Errorf("reason %q", got)
	}
	if got := sectionText("## Reason\n\n", "Reason"); got != "" {
		t.Errorf("empty reason %q", got)
	}
}

func TestMoveDocFinishesAnInterruptedMove(t *testing.T) {
	root := t.TempDir()
	from := filepath.Join(root, "a.md")
	to := filepath.Join(root, "to")
	_ = os.Mkdir(to, 0o755)
	d := &Doc{Body: "x\n"}
	d.Set("workflow_id", "w1")
	_ = os.WriteFile(from, d.Render(), 0o644)
	// A crash after the write, before the remove: both exist.
	_ = os.WriteFile(filepath.Join(to, "a.md"), d.Render(), 0o644)
	got, err := moveDoc(from, to, "a.md", d, "workflow_id")
	if err != nil || got != filepath.Join(to, "a.md") {
		t.Fatalf("moved to %s (%v), want the same a.md", got, err)
	}
	if _, err := os.Stat(from); !os.IsNotExist(err) {
		t.Errorf("source left behind")
	}
	// Another item of the same name keeps its file.
	other := &Doc{Body: "y\n"}
	other.Set("workflow_id", "w2")
	_ = os.WriteFile(from, other.Render(), 0o644)
	got, err = moveDoc(from, to, "a.md", other, "workflow_id")
	if err != nil || filepath.Base(got) != "a-2.md" {
		t.Errorf("moved to %s (%v), want a-2.md", got, err)
	}
}
