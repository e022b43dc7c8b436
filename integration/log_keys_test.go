package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// assertLogKeysOnce fails when a JSON log line of the file at path is not
// an object, repeats a key (parsers keep only the last) or lacks a
// component. It returns the number of lines checked.
func assertLogKeysOnce(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		n++
		dec := json.NewDecoder(bytes.NewReader(line))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Errorf("%s: line %d is not a JSON object: %s", path, n, line)
			continue
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Errorf("%s: line %d: %v", path, n, err)
				break
			}
			key := tok.(string)
			if seen[key] {
				t.Errorf("%s: line %d has key %q twice: %s", path, n, key, line)
			}
			seen[key] = true
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Errorf("%s: line %d: %v", path, n, err)
				break
			}
		}
		if !seen["component"] {
			t.Errorf("%s: line %d has no component: %s", path, n, line)
		}
	}
	return n
}
