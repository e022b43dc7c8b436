package vault

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
)

// clock is a test clock the bridge reads through NowFunc.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// bridgeEnv is a bridge on a real Redis and a scaffolded vault, driven
// pass by pass with a test clock.
type bridgeEnv struct {
	t     *testing.T
	bb    *blackboard.Client
	br    *Bridge
	clock *clock
	dir   string
}

const testSettle = 2 * time.Second

func newBridgeEnv(t *testing.T, opt Options, bbOpts ...func(*blackboard.Options)) *bridgeEnv {
	t.Helper()
	bb := redistest.Client(t, bbOpts...)
	dir := filepath.Join(t.TempDir(), "vault")
	if _, err := Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	opt.Path = dir
	if opt.Settle == 0 {
		opt.Settle = testSettle
	}
	br := NewBridge(bb, opt, zerolog.Nop())
	c := &clock{now: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	br.NowFunc = c.Now
	return &bridgeEnv{t: t, bb: bb, br: br, clock: c, dir: dir}
}

// pass runs one full pass of the bridge.
func (e *bridgeEnv) pass() {
	e.t.Helper()
	if err := e.br.Sync(context.Background()); err != nil {
		e.t.Logf("pass: %v", err) // workflows unknown to a blackboard without an orchestrator
	}
}

// goals returns every goal on the blackboard.
func (e *bridgeEnv) goals() []*blackboard.Artefact {
	e.t.Helper()
	ctx := context.Background()
	page, err := e.bb.ListArtefacts(ctx, blackboard.PageQuery{Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	arts, err := e.bb.GetArtefacts(ctx, page.IDs)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*blackboard.Artefact
	for _, a := range arts {
		if a != nil && a.IsGoal() {
			out = append(out, a)
		}
	}
	return out
}

func (e *bridgeEnv) path(folder, name string) string { return filepath.Join(e.dir, folder, name) }

// write writes a file in place, the way an editor's autosave or
// `printf >` does (truncate, then write; no rename).
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// appendTo appends text to path (a second chunk of a copy).
func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func (e *bridgeEnv) wantGoals(n int) []*blackboard.Artefact {
	e.t.Helper()
	g := e.goals()
	if len(g) != n {
		var texts []string
		for _, a := range g {
			texts = append(texts, a.Payload)
		}
		e.t.Fatalf("%d goals, want %d: %q (refused: %v)", len(g), n, texts, e.br.refused)
	}
	return g
}

func TestIngestWaitsForAnEditorsAutosaves(t *testing.T) {
	e := newBridgeEnv(t, Options{})
	na := e.path(NeedsAction, "Untitled.md")
	full := "---\npriority: high\n---\nAdd a /health endpoint to the API and document it.\n"
	// Obsidian: a new note is an empty file, then autosaves of what is
	// typed, each a second or so apart, then the rename to its title.
	write(t, na, "")
	e.pass()
	e.clock.Add(time.Second)
	write(t, na, "Add a /he")
	e.pass()
	e.clock.Add(1500 * time.Millisecond)
	write(t, na, full)
	e.pass()
	e.clock.Add(testSettle - time.Millisecond)
	e.pass()
	e.wantGoals(0)
	titled := e.path(NeedsAction, "Add health.md")
	if err := os.Rename(na, titled); err != nil {
		t.Fatalf("the editor's rename failed (the file was taken away): %v", err)
	}
	e.pass()
	e.clock.Add(testSettle)
	e.pass()
	g := e.wantGoals(1)
	if g[0].Payload != "Add a /health endpoint to the API and document it." || g[0].Metadata["priority"] != "high" {
		t.Errorf("goal %q %v, want the full text and its priority", g[0].Payload, g[0].Metadata)
	}
	moved := readDoc(t, e.path(InProgress, "Add health.md"))
	if moved.Get("workflow_id") != g[0].ID || !strings.Contains(moved.Body, "document it.") {
		t.Errorf("In_Progress file: %v\n%s", moved.Map(), moved.Body)
	}
	e.clock.Add(time.Minute)
	e.pass()
	e.wantGoals(1)
}

func TestIngestTwoChunksWithAPause(t *testing.T) {
	e := newBridgeEnv(t, Options{})
	p := e.path(NeedsAction, "report.md")
	first := "---\npriority: high\nsubject: Quarterly report\n---\nWrite the quarterly report. Sections:\n"
	second := "1. revenue\n2. costs\n3. outlook\n"
	write(t, p, first)
	e.pass()
	e.clock.Add(testSettle - 100*time.Millisecond) // the copy pauses
	e.pass()
	appendTo(t, p, second)
	e.pass()
	e.clock.Add(testSettle - 100*time.Millisecond)
	e.pass()
	e.wantGoals(0)
	e.clock.Add(200 * time.Millisecond)
	e.pass()
	g := e.wantGoals(1)
	if !strings.HasSuffix(g[0].Payload, "3. outlook") || g[0].Metadata["priority"] != "high" {
		t.Errorf("goal lost the second chunk or the priority: %q %v", g[0].Payload, g[0].Metadata)
	}
	data, err := os.ReadFile(e.path(InProgress, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), second) {
		t.Errorf("the task file lost its second chunk:\n%s", data)
	}
}

// TestIngestChangeBetweenReadAndMove: a writer that comes back after the
// file looked settled (here: between the pass's listing and its read,
// simulated by a change the settler has not seen) is waited for again.
func TestIngestRechecksBeforeMoving(t *testing.T) {
	e := newBridgeEnv(t, Options{})
	p := e.path(NeedsAction, "note.md")
	write(t, p, "First half")
	e.pass()
	e.clock.Add(testSettle)
	// The settler saw "First half" settled; the writer appends now, and
	// the next pass must not take the file before it settles again.
	appendTo(t, p, " and the second half.\n")
	e.pass()
	e.wantGoals(0)
	e.clock.Add(testSettle)
	e.pass()
	g := e.wantGoals(1)
	if g[0].Payload != "First half and the second half." {
		t.Errorf("goal %q", g[0].Payload)
	}
}

func TestIngestRefusesAHugeFileUntouched(t *testing.T) {
	e := newBridgeEnv(t, Options{MaxFileBytes: 1 << 20})
	p := e.path(NeedsAction, "dump.md")
	chunk := bytes.Repeat([]byte("All work and no play makes a long task file.\n"), (1<<20)/45)
	var want []byte
	write(t, p, "")
	for i := 0; i < 10; i++ { // 10 MiB in ten writes, a pass after each
		appendTo(t, p, string(chunk))
		want = append(want, chunk...)
		e.pass()
		e.clock.Add(500 * time.Millisecond)
	}
	e.clock.Add(testSettle)
	e.pass()
	e.wantGoals(0)
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("the file is gone from Needs_Action/: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the file changed: %d bytes, wrote %d", len(got), len(want))
	}
	if why := e.br.refused[p]; !strings.Contains(why, "too large") || !strings.Contains(why, "max_file_bytes") {
		t.Errorf("refusal %q, want one naming vault.max_file_bytes", why)
	}
}

func TestIngestTakesALargeFileWhole(t *testing.T) {
	const size = 10 << 20
	e := newBridgeEnv(t, Options{MaxFileBytes: 16 << 20}, func(o *blackboard.Options) { o.MaxPayloadBytes = 16 << 20 })
	p := e.path(NeedsAction, "big.md")
	line := "Summarise every line of this long log, one finding per line.\n"
	text := strings.Repeat(line, size/len(line))
	write(t, p, "")
	for off := 0; off < len(text); off += 1 << 20 {
		end := min(off+1<<20, len(text))
		appendTo(t, p, text[off:end])
		e.pass()
		e.clock.Add(300 * time.Millisecond)
	}
	e.wantGoals(0)
	e.clock.Add(testSettle)
	e.pass()
	g := e.wantGoals(1)
	if len(g[0].Payload) != len(strings.TrimSpace(text)) {
		t.Errorf("goal payload %d bytes, file %d bytes", len(g[0].Payload), len(text))
	}
	got, err := os.ReadFile(e.path(InProgress, "big.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < len(text) || !strings.Contains(string(got), text) {
		t.Errorf("the task file is %d bytes, shorter than the %d written", len(got), len(text))
	}
}

// TestInProgressEditIsKept: a person edits the task file while its
// workflow runs; Sett's state updates merge into their text and no
// second workflow starts.
func TestInProgressEditIsKept(t *testing.T) {
	e := newBridgeEnv(t, Options{})
	ctx := context.Background()
	p := e.path(NeedsAction, "task.md")
	write(t, p, "---\nsubject: Fix the login\n---\nFix the login page.\n")
	e.pass()
	e.clock.Add(testSettle)
	e.pass()
	g := e.wantGoals(1)
	ip := e.path(InProgress, "task.md")
	doc := readDoc(t, ip)
	edited := strings.Replace(string(doc.Render()), "Fix the login page.", "Fix the login page.\n\nAlso: keep the old URL working.", 1)
	write(t, ip, edited)
	// Sett updates the state (paused: queued) after the person's save.
	if _, err := e.bb.Pause(ctx, "test", "edit test", "cli"); err != nil {
		t.Fatal(err)
	}
	stale := &Doc{}
	*stale = *doc
	stale.ops = nil
	stale.Set("state", StateQueued)
	if err := updateDoc(ip, stale); err != nil {
		t.Fatal(err)
	}
	after := readDoc(t, ip)
	if !strings.Contains(after.Body, "keep the old URL working") || after.Get("state") != StateQueued || after.Get("workflow_id") != g[0].ID {
		t.Errorf("the edit or Sett's update was lost: %v\n%s", after.Map(), after.Body)
	}
	e.clock.Add(time.Minute)
	e.pass()
	e.wantGoals(1)
	if data, _ := os.ReadFile(ip); !strings.Contains(string(data), "keep the old URL working") {
		t.Errorf("a pass rewrote the person's edit away:\n%s", data)
	}
}

// TestBridgeRunSettlesWithRealTime runs the bridge as the orchestrator
// does (file events, timers) with the default settle period: a file
// written in place becomes one goal with its full text once it has been
// quiet for the period, not before.
func TestBridgeRunSettlesWithRealTime(t *testing.T) {
	bb := redistest.Client(t)
	dir := filepath.Join(t.TempDir(), "vault")
	if _, err := Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	br := NewBridge(bb, Options{Path: dir, Settle: testSettle, RescanInterval: time.Hour}, zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- br.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	// One in-place write: the steps of an editor's sequence are covered
	// pass by pass on a test clock above; here only the timer that
	// brings the pass once the file settled can start the task (no
	// rescan within the test), whatever the machine's load.
	p := filepath.Join(dir, NeedsAction, "Untitled.md")
	start := time.Now()
	write(t, p, "Ship the release notes for 1.4.\n")
	var moved string
	eventually.True(t, 60*time.Second, "the task in In_Progress/", func() bool {
		data, err := os.ReadFile(filepath.Join(dir, InProgress, "Untitled.md"))
		moved = string(data)
		return err == nil
	})
	if took := time.Since(start); took < testSettle {
		t.Errorf("ingested after %v, before the settle period of %v", took, testSettle)
	}
	if !strings.Contains(moved, "Ship the release notes for 1.4.") {
		t.Errorf("task file:\n%s", moved)
	}
	page, err := bb.ListArtefacts(ctx, blackboard.PageQuery{})
	if err != nil || len(page.IDs) != 1 {
		t.Errorf("%d artefacts (%v), want one goal", len(page.IDs), err)
	}
}

func readDoc(t *testing.T, path string) *Doc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDoc(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
