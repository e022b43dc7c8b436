package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/settdev/sett/internal/jsonkind"
)

// Limits that ParseAgentMemory enforces.
const (
	// MaxKeyFindings is the most key findings a memory may hold (the memory and review design:
	// "≤5 bullets").
	MaxKeyFindings = 5
	// MaxRenderedLines is the most lines a memory may take when rendered by
	// RenderAgentMemory (the memory and review design: "≤30 lines per isolated memory
	// file").
	MaxRenderedLines = 30
	// MaxTextLen is the longest single text (summary, finding, decision,
	// severity, path, pointer, note) in characters. The memory and review design asks for
	// compact memories; 400 characters is two long sentences.
	MaxTextLen = 400
)

// AgentMemory is the compact memory one agent returns for one piece of work
// (the memory and review design's isolated memory). The zero value is not valid: Status is
// required.
//
// Strings are single lines: ParseAgentMemory folds line breaks into
// spaces. Status is one of AllStatuses; HighestSeverity is free text in the
// agent's taxonomy (CT: Critical/High/Medium/Low, R: Blocker/Major/Minor,
// V: PASS/FAIL), "" when the agent gave none; the review policy, not this
// package, judges it.
type AgentMemory struct {
	Status          Status          `json:"status"`
	Summary         string          `json:"summary,omitempty"`
	KeyFindings     []string        `json:"key_findings,omitempty"`
	HighestSeverity string          `json:"highest_severity,omitempty"`
	Decisions       []string        `json:"decisions,omitempty"`
	ArtifactIndex   []ArtifactEntry `json:"artifact_index,omitempty"`
	// Truncated is set by RepairAgentMemory when it had to cut or drop
	// parts of the memory the tool returned; a tool cannot set it.
	Truncated bool `json:"truncated,omitempty"`
}

// Memory object fields, as a tool spells them.
const (
	fieldStatus          = "status"
	fieldSummary         = "summary"
	fieldKeyFindings     = "key_findings"
	fieldHighestSeverity = "highest_severity"
	fieldDecisions       = "decisions"
	fieldArtifactIndex   = "artifact_index"
)

var memoryFields = []string{fieldStatus, fieldSummary, fieldKeyFindings, fieldHighestSeverity, fieldDecisions, fieldArtifactIndex}

var entryFields = []string{"path", "sections", "note"}

// ParseAgentMemory validates the memory object a tool returned and returns
// it normalised: strings folded to one line and trimmed, Status upper case,
// object-form sections prefixed with "§", line-form artifact index entries
// parsed (see ArtifactEntry).
//
// The rules, each reported as a *MemoryError (matching ErrInvalidMemory)
// that names the field and says what is allowed:
//   - raw must be one JSON object with at least one field; only status,
//     summary, key_findings, highest_severity, decisions and artifact_index
//     are allowed, each at most once; a null value counts as absent;
//   - status is required: DONE, NEEDS_REVISION or ERROR (case does not
//     matter). The seed's status line "DONE: summary" is accepted too, and
//     fills summary when summary is absent;
//   - summary and highest_severity are strings;
//   - key_findings (at most MaxKeyFindings) and decisions are lists of
//     non-empty strings;
//   - artifact_index is a list of objects {"path", "sections", "note"}
//     (path required; sections a list of strings) or of strings in the
//     seed's line form;
//   - every text is at most MaxTextLen characters;
//   - the memory renders (RenderAgentMemory) to at most MaxRenderedLines
//     lines.
//
// Every problem found is reported at once.
func ParseAgentMemory(raw json.RawMessage) (AgentMemory, error) {
	p := &problems{}
	fields, ok := readObject(raw, "memory", memoryFields, p)
	if !ok {
		return AgentMemory{}, p.err()
	}
	if isEmptyObject(raw) {
		p.add("memory", "memory is an empty object; give at least status (DONE, NEEDS_REVISION or ERROR), or leave memory out")
		return AgentMemory{}, p.err()
	}

	var m AgentMemory
	statusSummary := ""
	if v, ok := fields[fieldStatus]; ok {
		m.Status, statusSummary = parseStatus(v, p)
	} else {
		p.add(fieldStatus, "status is missing; it is required: DONE, NEEDS_REVISION or ERROR")
	}
	if v, ok := fields[fieldSummary]; ok {
		m.Summary = text(v, fieldSummary, p)
	}
	if m.Summary == "" && statusSummary != "" {
		m.Summary = statusSummary
		checkLen(fieldStatus, m.Summary, p)
	}
	if v, ok := fields[fieldKeyFindings]; ok {
		m.KeyFindings = textList(v, fieldKeyFindings, "finding", p)
		if n := len(m.KeyFindings); n > MaxKeyFindings {
			p.add(fieldKeyFindings, "key_findings has %d entries; at most %d are allowed (keep the most important, the artefact holds the rest)", n, MaxKeyFindings)
		}
	}
	if v, ok := fields[fieldHighestSeverity]; ok {
		m.HighestSeverity = text(v, fieldHighestSeverity, p)
	}
	if v, ok := fields[fieldDecisions]; ok {
		m.Decisions = textList(v, fieldDecisions, "decision", p)
	}
	if v, ok := fields[fieldArtifactIndex]; ok {
		m.ArtifactIndex = artifactIndex(v, p)
	}

	if !p.any() {
		if n := RenderedLines(m); n > MaxRenderedLines {
			p.add("memory", "memory renders to %d lines, more than the %d allowed: it has %d key_findings, %d decisions and %d artifact_index entries; shorten decisions and artifact_index (together about %d entries fit with %d key findings)",
				n, MaxRenderedLines, len(m.KeyFindings), len(m.Decisions), len(m.ArtifactIndex),
				max(MaxRenderedLines-n+len(m.Decisions)+len(m.ArtifactIndex), 0), len(m.KeyFindings))
		}
	}
	if err := p.err(); err != nil {
		return AgentMemory{}, err
	}
	return m, nil
}

// readObject returns the non-null fields of the JSON object raw, reporting
// under path a value that is not an object, unknown fields and repeated
// fields. ok is false when raw is not an object at all.
func readObject(raw json.RawMessage, path string, allowed []string, p *problems) (map[string]json.RawMessage, bool) {
	if !json.Valid(raw) {
		p.add(path, "%s is not valid JSON", path)
		return nil, false
	}
	if k := jsonkind.Of(raw); k != "object" {
		p.add(path, "%s is a JSON %s; it must be an object", path, k)
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		p.add(path, "%s is not valid JSON: %v", path, err)
		return nil, false
	}
	fields := make(map[string]json.RawMessage)
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			p.add(path, "%s is not valid JSON: %v", path, err)
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			p.add(path, "%s is not valid JSON: %v", path, err)
			return nil, false
		}
		child := key
		if key == "" {
			child = `""` // still a name a reader can see
		}
		if path != "memory" {
			child = path + "." + child
		}
		switch {
		case seen[key]:
			p.add(child, "%s appears more than once; give each field once", child)
			continue
		case !slices.Contains(allowed, key):
			p.add(child, "unknown field %q in %s; allowed fields are %s", key, path, strings.Join(allowed, ", "))
			continue
		}
		seen[key] = true
		if jsonkind.Of(v) != "null" {
			fields[key] = v
		}
	}
	return fields, true
}

// isEmptyObject reports whether raw (a valid JSON object) has no keys.
func isEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && len(m) == 0
}

// parseStatus reads status, accepting "DONE" and the seed's status line
// "DONE: summary" in any case; it returns the status and the summary part.
func parseStatus(v json.RawMessage, p *problems) (Status, string) {
	s, ok := str(v, fieldStatus, p)
	if !ok {
		return "", ""
	}
	word, rest, _ := strings.Cut(oneLine(s), ":")
	st := Status(strings.ToUpper(strings.TrimSpace(word)))
	if !st.Valid() {
		p.add(fieldStatus, "status %q is not valid; use DONE, NEEDS_REVISION or ERROR", cut(oneLine(s), 60))
		return "", ""
	}
	return st, strings.TrimSpace(rest)
}

// str decodes a JSON string, reporting another kind under field.
func str(v json.RawMessage, field string, p *problems) (string, bool) {
	var s string
	if k := jsonkind.Of(v); k != "string" || json.Unmarshal(v, &s) != nil {
		p.add(field, "%s is a JSON %s; it must be a string", field, jsonkind.Of(v))
		return "", false
	}
	return s, true
}

// text decodes a string field as one line of at most MaxTextLen characters.
func text(v json.RawMessage, field string, p *problems) string {
	s, ok := str(v, field, p)
	if !ok {
		return ""
	}
	s = oneLine(s)
	checkLen(field, s, p)
	return s
}

func checkLen(field, s string, p *problems) {
	if n := utf8.RuneCountInString(s); n > MaxTextLen {
		p.add(field, "%s is %d characters long; at most %d are allowed (a memory is a summary: point to the artefact for details)", field, n, MaxTextLen)
	}
}

// textList decodes a list of non-empty one-line strings; what names one
// item in messages.
func textList(v json.RawMessage, field, what string, p *problems) []string {
	var items []json.RawMessage
	if k := jsonkind.Of(v); k != "array" || json.Unmarshal(v, &items) != nil {
		p.add(field, "%s is a JSON %s; it must be a list of strings, one %s each", field, jsonkind.Of(v), what)
		return nil
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, ok := str(item, f, p)
		if !ok {
			continue
		}
		s = oneLine(s)
		if s == "" {
			p.add(f, "%s is empty; each %s must say something (remove empty entries)", f, what)
			continue
		}
		checkLen(f, s, p)
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil // an empty list is no list: one form for both
	}
	return out
}

// artifactIndex decodes the artifact index: objects or line-form strings.
func artifactIndex(v json.RawMessage, p *problems) []ArtifactEntry {
	var items []json.RawMessage
	if k := jsonkind.Of(v); k != "array" || json.Unmarshal(v, &items) != nil {
		p.add(fieldArtifactIndex, `artifact_index is a JSON %s; it must be a list of entries, each {"path": "design.md", "sections": ["§API"], "note": "..."} or "design.md — §API (note)"`, jsonkind.Of(v))
		return nil
	}
	out := make([]ArtifactEntry, 0, len(items))
	for i, item := range items {
		f := fmt.Sprintf("%s[%d]", fieldArtifactIndex, i)
		switch jsonkind.Of(item) {
		case "string":
			s, _ := str(item, f, p)
			e, ok := parseEntryLine(s)
			if !ok {
				p.add(f, `%s has no path; write "path — §Section (note)"`, f)
				continue
			}
			checkEntryLen(f, e, p)
			out = append(out, e)
		case "object":
			if e, ok := entryObject(item, f, p); ok {
				out = append(out, e)
			}
		default:
			p.add(f, `%s is a JSON %s; it must be an object {"path", "sections", "note"} or a string "path — §Section (note)"`, f, jsonkind.Of(item))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func entryObject(v json.RawMessage, f string, p *problems) (ArtifactEntry, bool) {
	fields, ok := readObject(v, f, entryFields, p)
	if !ok {
		return ArtifactEntry{}, false
	}
	var e ArtifactEntry
	if raw, ok := fields["path"]; ok {
		if s, ok := str(raw, f+".path", p); ok {
			e.Path = strings.Trim(oneLine(s), "`")
		}
	}
	if e.Path == "" {
		p.add(f+".path", "%s.path is missing or empty; name the artefact file", f)
	}
	if raw, ok := fields["sections"]; ok {
		switch jsonkind.Of(raw) {
		case "string":
			// One string of pointers, as in the line form.
			s, _ := str(raw, f+".sections", p)
			for _, ptr := range splitPointers(oneLine(s)) {
				e.Sections = append(e.Sections, sectionPointer(ptr))
			}
		default:
			for _, s := range textList(raw, f+".sections", "section", p) {
				e.Sections = append(e.Sections, sectionPointer(s))
			}
		}
	}
	if raw, ok := fields["note"]; ok {
		e.Note = text(raw, f+".note", p)
	}
	checkEntryLen(f, e, p)
	return e, e.Path != ""
}

func checkEntryLen(f string, e ArtifactEntry, p *problems) {
	checkLen(f+".path", e.Path, p)
	for i, s := range e.Sections {
		checkLen(fmt.Sprintf("%s.sections[%d]", f, i), s, p)
	}
}
