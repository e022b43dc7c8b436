package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMergeDocReportsAnEditBetweenReadAndWrite: Sett reads a task file,
// the person saves it, then Sett writes its state change: the person's
// text is kept, and the stamp mergeDoc merged into differs from the one
// Sett read (so the pass can say the edit was kept). Without an edit in
// between, the stamps agree.
func TestMergeDocReportsAnEditBetweenReadAndWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "task.md")
	if err := os.WriteFile(path, []byte("---\nstate: running\n---\nWrite the report.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, read, err := readCurrent(path)
	if err != nil {
		t.Fatal(err)
	}
	// The person's save: another size and a later mtime.
	if err := os.WriteFile(path, []byte("---\nstate: running\n---\nWrite the report.\nAlso the risks.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	doc.Set("state", "awaiting approval")
	merged, err := mergeDoc(path, doc)
	if err != nil {
		t.Fatal(err)
	}
	if merged == read || merged == (stamp{}) {
		t.Errorf("mergeDoc merged into %+v, the stamp Sett read (%+v): the edit in between goes unnoticed", merged, read)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "Also the risks.") || !strings.Contains(string(b), "state: awaiting approval") {
		t.Errorf("after the merge:\n%s\nwant the person's line and Sett's state", b)
	}

	doc, read, err = readCurrent(path)
	if err != nil {
		t.Fatal(err)
	}
	doc.Set("state", "done")
	if merged, err := mergeDoc(path, doc); err != nil || merged != read {
		t.Errorf("with no edit in between mergeDoc merged into %+v (%v), want the stamp it read, %+v", merged, err, read)
	}
}
