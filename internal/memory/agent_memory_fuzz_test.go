package memory

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseAgentMemory checks ParseAgentMemory's promises on any input:
// it never panics, it refuses with a *MemoryError only, what it accepts
// renders within MaxRenderedLines lines, and its result, stored as JSON
// and parsed again, comes back unchanged (so the cub can store a memory
// and the orchestrator read it back).
func FuzzParseAgentMemory(f *testing.F) {
	for _, seed := range []string{
		`{"status":"DONE"}`,
		`{"status":"needs_revision: two\nlines","key_findings":["a","b"],"highest_severity":"High"}`,
		`{"status":"ERROR","decisions":["d"],"artifact_index":["a.md — §A (x, y), §B",{"path":"b.md","sections":"C, §D","note":"n"}]}`,
		memoryJSON(5, 1, 6),
		memoryJSON(5, 2, 6),
		`{}`, `[]`, `{"status":1}`, `{"status":"DONE","status":"DONE"}`, `{"status":"DONE","artifact_index":[{"path":"` + "`x`" + `"}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		m, err := ParseAgentMemory(json.RawMessage(raw))
		if err != nil {
			var me *MemoryError
			if !errors.As(err, &me) || me.Field == "" || len(me.Fields) == 0 {
				t.Fatalf("error %v (%T) is not a *MemoryError naming a field", err, err)
			}
			return
		}
		if n := RenderedLines(m); n > MaxRenderedLines {
			t.Fatalf("accepted a memory of %d lines", n)
		}
		for _, line := range strings.Split(strings.TrimSuffix(RenderAgentMemory("a", m), "\n"), "\n") {
			if strings.ContainsAny(line, "\r\v\f") {
				t.Fatalf("rendered line %q holds a line break", line)
			}
		}
		stored, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseAgentMemory(stored)
		if err != nil {
			t.Fatalf("the stored form %s is refused: %v", stored, err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip changed the memory:\n%#v\n%#v", m, back)
		}
	})
}
