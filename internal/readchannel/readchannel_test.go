package readchannel

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const plan = "# Plan\nintro\n## Tasks\n- T01\n### T01 detail\nx\n## Risks\n- cache stampede\n"

func TestSections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, payload string
		want          []string
	}{
		{"markdown headings in order", plan, []string{"Plan", "Tasks", "T01 detail", "Risks"}},
		{"a JSON object's top-level keys, sorted", `{"status": "DONE", "findings": ["a"], "severity": "Minor"}`, []string{"findings", "severity", "status"}},
		{"plain text has none", "just text\n#not a heading", nil},
		{"a JSON array is text", `["a"]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sections(tc.payload); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Sections = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSection(t *testing.T) {
	t.Parallel()
	review := `{"status": "NEEDS_REVISION", "findings": [{"text": "no tests", "severity": "Major"}]}`
	for _, tc := range []struct {
		name, payload, section, want string
		ok                           bool
	}{
		{"a heading up to the next of its level, subsections included", plan, "Tasks", "## Tasks\n- T01\n### T01 detail\nx\n", true},
		{"the last section runs to the end", plan, "Risks", "## Risks\n- cache stampede\n", true},
		{"the memory index's § pointer and any case", plan, "§risks", "## Risks\n- cache stampede\n", true},
		{"a JSON string value unquoted", review, "status", "NEEDS_REVISION", true},
		{"a JSON value as JSON", review, "findings", `[{"text": "no tests", "severity": "Major"}]`, true},
		{"no such section", plan, "Budget", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Section(tc.payload, tc.section)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Section(%q) = %q, %v; want %q, %v", tc.section, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func fetchFrom(arts map[string]*Artefact) Fetch {
	return func(_ context.Context, id string) (*Artefact, error) {
		if a, ok := arts[id]; ok {
			return a, nil
		}
		return nil, ErrNotFound
	}
}

func TestAnswer(t *testing.T) {
	t.Parallel()
	fetch := fetchFrom(map[string]*Artefact{
		"plan-1":  {WorkflowID: "wf-a", Payload: plan},
		"other-1": {WorkflowID: "wf-b", Payload: "secret"},
	})
	for _, tc := range []struct {
		name, request, want, wantErr string
	}{
		{name: "a whole artefact", request: "plan-1\n", want: plan},
		{name: "a section", request: "plan-1#Risks", want: "## Risks\n- cache stampede\n"},
		{name: "another workflow's artefact is not found", request: "other-1", wantErr: "artefact other-1: not found in this workflow"},
		{name: "an unknown id", request: "nope", wantErr: "not found in this workflow"},
		{name: "an unknown section lists the sections", request: "plan-1#Budget", wantErr: `has no section "Budget" (sections: Plan, Tasks, T01 detail, Risks)`},
		{name: "an empty request", request: "\n", wantErr: "give an artefact id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Answer(context.Background(), tc.request, "wf-a", fetch)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Answer error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Answer = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestServerRoundTrip runs a real server and client over a Unix socket.
func TestServerRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.sock")
	s, err := Listen(context.Background(), path, "wf-a", fetchFrom(map[string]*Artefact{
		"plan-1": {WorkflowID: "wf-a", Payload: plan}, "other-1": {WorkflowID: "wf-b", Payload: "secret"}}))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Read(path, "plan-1#Tasks"); err != nil || got != "## Tasks\n- T01\n### T01 detail\nx\n" {
		t.Fatalf("Read = %q, %v", got, err)
	}
	if _, err := Read(path, "other-1"); err == nil || !strings.Contains(err.Error(), "not found in this workflow") {
		t.Fatalf("another workflow's artefact: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path, "plan-1"); err == nil || !strings.Contains(err.Error(), "works only inside a tool run by a cub") {
		t.Fatalf("after Close: %v", err)
	}
}
