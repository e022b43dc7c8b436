package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseAgentMemoryAccepts(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want AgentMemory
	}{
		{
			name: "status only",
			raw:  `{"status":"DONE"}`,
			want: AgentMemory{Status: StatusDone},
		},
		{
			name: "status in any case, trimmed",
			raw:  `{"status":" needs_revision "}`,
			want: AgentMemory{Status: StatusNeedsRevision},
		},
		{
			name: "the seed's status line fills the summary",
			raw:  `{"status":"ERROR: could not read design.md"}`,
			want: AgentMemory{Status: StatusError, Summary: "could not read design.md"},
		},
		{
			name: "an explicit summary wins over the status line",
			raw:  `{"status":"DONE: from status","summary":"from summary"}`,
			want: AgentMemory{Status: StatusDone, Summary: "from summary"},
		},
		{
			name: "null fields count as absent",
			raw:  `{"status":"DONE","summary":null,"key_findings":null,"highest_severity":null,"decisions":null,"artifact_index":null}`,
			want: AgentMemory{Status: StatusDone},
		},
		{
			name: "line breaks folded into spaces",
			raw:  `{"status":"DONE","summary":"two\nlines","key_findings":["  a\r\n\tb  "],"highest_severity":" Major\n"}`,
			want: AgentMemory{Status: StatusDone, Summary: "two lines", KeyFindings: []string{"a b"}, HighestSeverity: "Major"},
		},
		{
			name: "every field, both artifact index forms",
			raw: `{
				"status": "NEEDS_REVISION",
				"summary": "Auth is missing on /admin",
				"key_findings": ["No auth on /admin", "No rate limit"],
				"highest_severity": "High",
				"decisions": ["Review only the API surface"],
				"artifact_index": [
					{"path": "ct-review/ct-security.md", "sections": ["Findings", "§Threats"], "note": "all High items"},
					"design.md — §API (endpoints, errors), §Auth (missing checks)",
					{"path": "feature.md"},
					{"path": "plan.md", "sections": "Tasks (T01, T02), §Risks"}
				]
			}`,
			want: AgentMemory{
				Status:          StatusNeedsRevision,
				Summary:         "Auth is missing on /admin",
				KeyFindings:     []string{"No auth on /admin", "No rate limit"},
				HighestSeverity: "High",
				Decisions:       []string{"Review only the API surface"},
				ArtifactIndex: []ArtifactEntry{
					{Path: "ct-review/ct-security.md", Sections: []string{"§Findings", "§Threats"}, Note: "all High items"},
					{Path: "design.md", Sections: []string{"§API (endpoints, errors)", "§Auth (missing checks)"}},
					{Path: "feature.md"},
					{Path: "plan.md", Sections: []string{"§Tasks (T01, T02)", "§Risks"}},
				},
			},
		},
		{
			name: "five findings at the limit",
			raw:  `{"status":"DONE","key_findings":["1","2","3","4","5"]}`,
			want: AgentMemory{Status: StatusDone, KeyFindings: []string{"1", "2", "3", "4", "5"}},
		},
		{
			name: "N/A severity kept as written",
			raw:  `{"status":"DONE","highest_severity":"N/A"}`,
			want: AgentMemory{Status: StatusDone, HighestSeverity: "N/A"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAgentMemory(json.RawMessage(tt.raw))
			if err != nil {
				t.Fatalf("ParseAgentMemory: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseAgentMemoryRejects(t *testing.T) {
	long := strings.Repeat("x", MaxTextLen+1)
	tests := []struct {
		name      string
		raw       string
		wantField string
		wantMsg   string // substring of the error
	}{
		{name: "not an object", raw: `["DONE"]`, wantField: "memory", wantMsg: "memory is a JSON array; it must be an object"},
		{name: "a string", raw: `"DONE"`, wantField: "memory", wantMsg: "memory is a JSON string"},
		{name: "empty object", raw: `{}`, wantField: "memory", wantMsg: "memory is an empty object; give at least status"},
		{name: "status missing", raw: `{"summary":"x"}`, wantField: "status", wantMsg: "status is missing; it is required: DONE, NEEDS_REVISION or ERROR"},
		{name: "only nulls", raw: `{"status":null}`, wantField: "status", wantMsg: "status is missing"},
		{name: "unknown status", raw: `{"status":"FINISHED"}`, wantField: "status", wantMsg: `status "FINISHED" is not valid; use DONE, NEEDS_REVISION or ERROR`},
		{name: "status not a string", raw: `{"status":1}`, wantField: "status", wantMsg: "status is a JSON number; it must be a string"},
		{name: "unknown field", raw: `{"status":"DONE","severity":"High"}`, wantField: "severity", wantMsg: `unknown field "severity" in memory; allowed fields are status, summary, key_findings, highest_severity, decisions, artifact_index`},
		{name: "repeated field", raw: `{"status":"DONE","status":"ERROR"}`, wantField: "status", wantMsg: "status appears more than once"},
		{name: "six key findings", raw: `{"status":"DONE","key_findings":["1","2","3","4","5","6"]}`, wantField: "key_findings", wantMsg: "key_findings has 6 entries; at most 5 are allowed"},
		{name: "key findings not a list", raw: `{"status":"DONE","key_findings":"one"}`, wantField: "key_findings", wantMsg: "key_findings is a JSON string; it must be a list of strings"},
		{name: "non-string finding", raw: `{"status":"DONE","key_findings":["a",{"text":"b"}]}`, wantField: "key_findings[1]", wantMsg: "key_findings[1] is a JSON object; it must be a string"},
		{name: "empty finding", raw: `{"status":"DONE","key_findings":["a"," \n "]}`, wantField: "key_findings[1]", wantMsg: "key_findings[1] is empty"},
		{name: "summary not a string", raw: `{"status":"DONE","summary":["a"]}`, wantField: "summary", wantMsg: "summary is a JSON array; it must be a string"},
		{name: "severity a number", raw: `{"status":"DONE","highest_severity":3}`, wantField: "highest_severity", wantMsg: "highest_severity is a JSON number"},
		{name: "decisions an object", raw: `{"status":"DONE","decisions":{"a":1}}`, wantField: "decisions", wantMsg: "decisions is a JSON object; it must be a list of strings, one decision each"},
		{name: "non-string decision", raw: `{"status":"DONE","decisions":[true]}`, wantField: "decisions[0]", wantMsg: "decisions[0] is a JSON boolean"},
		{name: "artifact index a string", raw: `{"status":"DONE","artifact_index":"design.md"}`, wantField: "artifact_index", wantMsg: "artifact_index is a JSON string; it must be a list of entries"},
		{name: "artifact entry a number", raw: `{"status":"DONE","artifact_index":[7]}`, wantField: "artifact_index[0]", wantMsg: "artifact_index[0] is a JSON number"},
		{name: "artifact entry without path", raw: `{"status":"DONE","artifact_index":[{"sections":["§A"]}]}`, wantField: "artifact_index[0].path", wantMsg: "artifact_index[0].path is missing or empty"},
		{name: "artifact entry with unknown field", raw: `{"status":"DONE","artifact_index":[{"path":"a.md","file":"b"}]}`, wantField: "artifact_index[0].file", wantMsg: `unknown field "file" in artifact_index[0]; allowed fields are path, sections, note`},
		{name: "artifact line without path", raw: `{"status":"DONE","artifact_index":["— §A"]}`, wantField: "artifact_index[0]", wantMsg: "artifact_index[0] has no path"},
		{name: "non-string section", raw: `{"status":"DONE","artifact_index":[{"path":"a.md","sections":[1]}]}`, wantField: "artifact_index[0].sections[0]", wantMsg: "artifact_index[0].sections[0] is a JSON number"},
		{name: "summary too long", raw: `{"status":"DONE","summary":"` + long + `"}`, wantField: "summary", wantMsg: "summary is 401 characters long; at most 400 are allowed"},
		{name: "status line too long", raw: `{"status":"DONE: ` + long + `"}`, wantField: "status", wantMsg: "status is 401 characters long"},
		{name: "finding too long", raw: `{"status":"DONE","key_findings":["` + long + `"]}`, wantField: "key_findings[0]", wantMsg: "key_findings[0] is 401 characters long"},
		{name: "more than 30 lines", raw: memoryJSON(5, 2, 6), wantField: "memory", wantMsg: "memory renders to 31 lines, more than the 30 allowed: it has 5 key_findings, 2 decisions and 6 artifact_index entries"},
		{name: "many entries", raw: memoryJSON(0, 0, 30), wantField: "memory", wantMsg: "memory renders to 46 lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseAgentMemory(json.RawMessage(tt.raw))
			if !errors.Is(err, ErrInvalidMemory) {
				t.Fatalf("error = %v, want ErrInvalidMemory", err)
			}
			var me *MemoryError
			if !errors.As(err, &me) {
				t.Fatalf("error %T is not a *MemoryError", err)
			}
			if me.Field != tt.wantField {
				t.Errorf("Field = %q, want %q (%v)", me.Field, tt.wantField, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error:\n got %s\nwant it to contain %s", err, tt.wantMsg)
			}
		})
	}
}

func TestParseAgentMemoryReportsEveryProblem(t *testing.T) {
	_, err := ParseAgentMemory(json.RawMessage(`{"status":"MAYBE","key_findings":["1","2","3","4","5","6"],"extra":1}`))
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("error = %v, want a *MemoryError", err)
	}
	if want := []string{"extra", "status", "key_findings"}; !slices.Equal(me.Fields, want) {
		t.Errorf("Fields = %q, want %q", me.Fields, want)
	}
	if me.Field != "extra" || !strings.HasPrefix(me.Reason, "3 problems: (1) unknown field") {
		t.Errorf("error = %+v", me)
	}
}

// memoryJSON builds a valid-looking memory with the given counts.
func memoryJSON(findings, decisions, entries int) string {
	m := map[string]any{"status": "DONE", "summary": "s"}
	list := func(n int, prefix string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s %d", prefix, i)
		}
		return out
	}
	if findings > 0 {
		m["key_findings"] = list(findings, "finding")
	}
	if decisions > 0 {
		m["decisions"] = list(decisions, "decision")
	}
	if entries > 0 {
		m["artifact_index"] = list(entries, "file.md — §Section")
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestRenderedLineBound checks, for every shape of memory around the
// limit, that ParseAgentMemory accepts exactly the memories that render
// to at most MaxRenderedLines lines.
func TestRenderedLineBound(t *testing.T) {
	accepted := 0
	for findings := 0; findings <= MaxKeyFindings; findings++ {
		for decisions := 0; decisions <= 12; decisions++ {
			for entries := 0; entries <= 12; entries++ {
				raw := memoryJSON(findings, decisions, entries)
				m, err := ParseAgentMemory(json.RawMessage(raw))
				// The line count of the rendered text, computed without
				// the package: 5 lines of title and status, the findings
				// section, 4 lines of severity, the decisions section when
				// there are decisions, and the artifact index.
				lines := 5 + 3 + max(findings, 1) + 4 + 3 + max(entries, 1)
				if decisions > 0 {
					lines += 3 + decisions
				}
				switch {
				case lines <= MaxRenderedLines && err != nil:
					t.Fatalf("%d/%d/%d: %d lines refused: %v", findings, decisions, entries, lines, err)
				case lines > MaxRenderedLines && err == nil:
					t.Fatalf("%d/%d/%d: %d lines accepted", findings, decisions, entries, lines)
				case err == nil:
					accepted++
					if got := strings.Count(RenderAgentMemory("agent", m), "\n"); got != lines || got > MaxRenderedLines {
						t.Fatalf("%d/%d/%d: rendered %d lines, want %d", findings, decisions, entries, got, lines)
					}
				}
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no memory accepted")
	}
}

func TestRenderAgentMemory(t *testing.T) {
	tests := []struct {
		name  string
		agent string
		m     AgentMemory
		want  string
	}{
		{
			name:  "full",
			agent: "ct-security",
			m: AgentMemory{
				Status:          StatusNeedsRevision,
				Summary:         "Auth is missing on /admin",
				KeyFindings:     []string{"No auth on /admin", "No rate limit"},
				HighestSeverity: "High",
				Decisions:       []string{"Reviewed the API surface only"},
				ArtifactIndex: []ArtifactEntry{
					{Path: "ct-review/ct-security.md", Sections: []string{"§Findings", "§Threats"}, Note: "all High items"},
					{Path: "design.md", Sections: []string{"§API (endpoints)"}},
					{Path: "feature.md", Note: "context"},
					{Path: "notes.md"},
				},
			},
			want: `# Memory: ct-security

## Status

NEEDS_REVISION: Auth is missing on /admin

## Key Findings

- No auth on /admin
- No rate limit

## Highest Severity

High

## Decisions Made

- Reviewed the API surface only

## Artifact Index

- ct-review/ct-security.md — §Findings, §Threats (all High items)
- design.md — §API (endpoints)
- feature.md (context)
- notes.md
`,
		},
		{
			name:  "minimal: no decisions section, N/A and None",
			agent: "v-build\nx",
			m:     AgentMemory{Status: StatusDone},
			want: `# Memory: v-build x

## Status

DONE

## Key Findings

None

## Highest Severity

N/A

## Artifact Index

None
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RenderAgentMemory(tt.agent, tt.m); got != tt.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestParseEntryLine(t *testing.T) {
	tests := []struct {
		name string
		line string
		want ArtifactEntry
		ok   bool
	}{
		{name: "em dash", line: "design.md — §API (endpoints, errors), §Auth", want: ArtifactEntry{Path: "design.md", Sections: []string{"§API (endpoints, errors)", "§Auth"}}, ok: true},
		{name: "em dash without spaces", line: "design.md—§API", want: ArtifactEntry{Path: "design.md", Sections: []string{"§API"}}, ok: true},
		{name: "en dash", line: "a.md – §X", want: ArtifactEntry{Path: "a.md", Sections: []string{"§X"}}, ok: true},
		{name: "hyphen with spaces", line: "a.md - §X, §Y", want: ArtifactEntry{Path: "a.md", Sections: []string{"§X", "§Y"}}, ok: true},
		{name: "hyphen inside the path is not a separator", line: "ct-review/ct-security.md — §A", want: ArtifactEntry{Path: "ct-review/ct-security.md", Sections: []string{"§A"}}, ok: true},
		{name: "bullet and backticks dropped", line: "- `plan.md` — §Tasks", want: ArtifactEntry{Path: "plan.md", Sections: []string{"§Tasks"}}, ok: true},
		{name: "path only", line: "  feature.md  ", want: ArtifactEntry{Path: "feature.md"}, ok: true},
		{name: "pointers get a § prefix", line: "a.md — API, lines 3-9 (setup)", want: ArtifactEntry{Path: "a.md", Sections: []string{"§API", "§lines 3-9 (setup)"}}, ok: true},
		{name: "empty pointers dropped", line: "a.md — , §A,, ", want: ArtifactEntry{Path: "a.md", Sections: []string{"§A"}}, ok: true},
		{name: "no path", line: " — §A", ok: false},
		{name: "empty", line: "", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseEntryLine(tt.line)
			if ok != tt.ok || (ok && !reflect.DeepEqual(got, tt.want)) {
				t.Fatalf("parseEntryLine(%q) = %#v, %v; want %#v, %v", tt.line, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestStatusValid(t *testing.T) {
	tests := []struct {
		name string
		s    Status
		want bool
	}{
		{name: "done", s: StatusDone, want: true},
		{name: "needs revision", s: StatusNeedsRevision, want: true},
		{name: "error", s: StatusError, want: true},
		{name: "lower case", s: "done", want: false},
		{name: "empty", s: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Valid(); got != tt.want {
				t.Fatalf("Valid() = %v, want %v", got, tt.want)
			}
		})
	}
}
