package blackboard

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestIDListJSONBytesIsExact: the size ValidateArtefact computes for the
// source list is what encoding it gives, for valid ids.
func TestIDListJSONBytesIsExact(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, MaxListLen} {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = NewID()
		}
		b, err := json.Marshal(ids)
		if err != nil {
			t.Fatal(err)
		}
		if got := idListJSONBytes(ids); got != len(b) {
			t.Errorf("%d ids: computed %d bytes, encoded %d", n, got, len(b))
		}
	}
}

// TestMetadataJSONBoundIsAnUpperBound: however much encoding has to
// escape, the bound is never below the encoded size, so the exact check is
// never skipped for metadata that could be over the limit.
func TestMetadataJSONBoundIsAnUpperBound(t *testing.T) {
	cases := []map[string]string{
		nil,
		{},
		{"attempt": "1"},
		{`"quoted"`: `back\slash`, "<html>": "&amp;", "ctl": "\x00\x01\x1f\t\n"},
		{"bad utf-8": "\xff\xfe\xfd", "separators": "\u2028\u2029", "wide": "日本語"},
		{"big": strings.Repeat("\x01", MaxFieldBytes)},
	}
	for _, m := range cases {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := metadataJSONBound(m); got < len(b) {
			t.Errorf("bound %d under the encoded %d bytes for %q", got, len(b), m)
		}
	}
}
