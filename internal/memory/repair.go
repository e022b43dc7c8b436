package memory

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// truncMark ends a text that RepairAgentMemory cut.
const truncMark = "…"

// RepairAgentMemory reads the memory a tool returned the way
// ParseAgentMemory does, but repairs what it can instead of refusing it
// (memory problems never halt the pipeline). A memory that
// ParseAgentMemory accepts is returned as it is, with no cuts. Otherwise:
//
//   - unknown fields are dropped;
//   - texts longer than MaxTextLen are cut (ending in "…");
//   - entries of key_findings, decisions and artifact_index that are not
//     usable (empty, or of the wrong JSON kind) are dropped;
//   - key_findings beyond MaxKeyFindings are dropped (the first ones are
//     kept: the contract asks for the most important first);
//   - while the memory renders to more than MaxRenderedLines lines, the
//     last decision, then the last artifact_index entry, then the last key
//     finding are dropped.
//
// A repaired memory has Truncated set, and cuts lists what was changed,
// one sentence each. When the memory cannot be repaired (not a JSON
// object, no valid status), RepairAgentMemory returns the error
// ParseAgentMemory gave (matching ErrInvalidMemory): the caller drops the
// memory, never the work.
func RepairAgentMemory(raw json.RawMessage) (m AgentMemory, cuts []string, err error) {
	m, err = ParseAgentMemory(raw)
	if err == nil {
		return m, nil, nil
	}
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil || doc == nil {
		return AgentMemory{}, nil, err
	}
	note := func(format string, args ...any) { cuts = append(cuts, fmt.Sprintf(format, args...)) }
	for _, k := range sortedKeys(doc) {
		if !slices.Contains(memoryFields, k) {
			delete(doc, k)
			note("unknown field %q dropped", k)
		}
	}
	for _, f := range []string{fieldStatus, fieldSummary, fieldHighestSeverity} {
		if s, ok := doc[f].(string); ok {
			if c, cut := cutText(oneLine(s)); cut {
				doc[f] = c
				note("%s cut to %d characters", f, MaxTextLen)
			}
		}
	}
	for _, f := range []string{fieldKeyFindings, fieldDecisions} {
		if doc[f] != nil {
			doc[f] = repairTextList(doc[f], f, note)
		}
	}
	if items, ok := doc[fieldKeyFindings].([]any); ok && len(items) > MaxKeyFindings {
		note("key_findings cut from %d to %d (the first %d kept)", len(items), MaxKeyFindings, MaxKeyFindings)
		doc[fieldKeyFindings] = items[:MaxKeyFindings]
	}
	if doc[fieldArtifactIndex] != nil {
		doc[fieldArtifactIndex] = repairIndex(doc[fieldArtifactIndex], note)
	}
	// Render-length cuts, least important first. Each round drops one
	// entry, so the loop ends.
	for {
		b, _ := json.Marshal(doc) // decoded JSON always marshals
		m, perr := ParseAgentMemory(b)
		if perr == nil {
			m.Truncated = true
			return m, cuts, nil
		}
		dropped := false
		for _, f := range []string{fieldDecisions, fieldArtifactIndex, fieldKeyFindings} {
			if items, ok := doc[f].([]any); ok && len(items) > 0 {
				doc[f] = items[:len(items)-1]
				note("the last entry of %s dropped to fit %d rendered lines", f, MaxRenderedLines)
				dropped = true
				break
			}
		}
		if !dropped {
			return AgentMemory{}, nil, err
		}
	}
}

// cutText cuts s to MaxTextLen characters, the last one the mark.
func cutText(s string) (string, bool) {
	if utf8.RuneCountInString(s) <= MaxTextLen {
		return s, false
	}
	r := []rune(s)
	return string(r[:MaxTextLen-utf8.RuneCountInString(truncMark)]) + truncMark, true
}

// repairTextList keeps the non-empty strings of a list, cut to
// MaxTextLen; a single string becomes a list of one.
func repairTextList(v any, field string, note func(string, ...any)) []any {
	items, ok := v.([]any)
	if !ok {
		if s, isStr := v.(string); isStr {
			items = []any{s}
			note("%s was one string; read as a list of one", field)
		} else {
			note("%s is not a list; dropped", field)
			return nil
		}
	}
	out := make([]any, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok || oneLine(s) == "" {
			note("%s[%d] is not a non-empty string; dropped", field, i)
			continue
		}
		if c, cut := cutText(oneLine(s)); cut {
			note("%s[%d] cut to %d characters", field, i, MaxTextLen)
			s = c
		}
		out = append(out, s)
	}
	return out
}

// repairIndex keeps the usable artifact index entries, texts cut.
func repairIndex(v any, note func(string, ...any)) []any {
	items, ok := v.([]any)
	if !ok {
		note("artifact_index is not a list; dropped")
		return nil
	}
	out := make([]any, 0, len(items))
	for i, it := range items {
		f := fmt.Sprintf("artifact_index[%d]", i)
		switch e := it.(type) {
		case string:
			if c, cut := cutText(oneLine(e)); cut {
				note("%s cut to %d characters", f, MaxTextLen)
				e = c
			}
			if _, ok := parseEntryLine(e); !ok {
				note("%s has no path; dropped", f)
				continue
			}
			out = append(out, e)
		case map[string]any:
			for _, k := range sortedKeys(e) {
				if !slices.Contains(entryFields, k) {
					delete(e, k)
					note("unknown field %s.%s dropped", f, k)
				}
			}
			if p, _ := e["path"].(string); oneLine(p) == "" {
				note("%s has no path; dropped", f)
				continue
			}
			for _, k := range []string{"path", "note"} {
				if s, ok := e[k].(string); ok {
					if c, cut := cutText(oneLine(s)); cut {
						e[k] = c
						note("%s.%s cut to %d characters", f, k, MaxTextLen)
					}
				} else if e[k] != nil {
					delete(e, k)
					note("%s.%s is not a string; dropped", f, k)
				}
			}
			if _, isStr := e["sections"].(string); !isStr && e["sections"] != nil {
				e["sections"] = repairTextList(e["sections"], f+".sections", note)
			}
			out = append(out, e)
		default:
			note("%s is neither an object nor a string; dropped", f)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
