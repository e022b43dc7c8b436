package memory

import "strings"

// RenderShared renders s as the memory and review design's memory.md:
//
//	# Operational Memory
//
//	## Artifact Index
//
//	| Artifact | Key Sections | Last Updated By |
//	|---|---|---|
//	| design.md | §API, §Errors (note) | designer, iteration 1 |
//
//	## Recent Decisions
//
//	- [agent, step] decision
//
//	## Lessons Learned
//
//	- [agent, step] issue → resolution
//
//	## Recent Updates
//
//	- [agent, step] update
//
// Lists are in the order entries were added, oldest first; an empty list
// renders as None (the table keeps its header). Pipes in table cells are
// escaped. The result ends in a newline and is the same for equal memories.
func RenderShared(s SharedMemory) string {
	var b strings.Builder
	b.WriteString("# Operational Memory\n")

	section(&b, "Artifact Index")
	b.WriteString("| Artifact | Key Sections | Last Updated By |\n|---|---|---|\n")
	for _, r := range s.ArtifactIndex {
		ptr := ArtifactEntry{Sections: r.Sections, Note: r.Note}.Pointers()
		b.WriteString("| " + escapeCell(r.Path) + " | " + escapeCell(ptr) + " | " + escapeCell(r.UpdatedBy) + " |\n")
	}

	for _, sec := range []struct {
		title   string
		entries []Entry
	}{
		{"Recent Decisions", s.RecentDecisions},
		{"Lessons Learned", s.LessonsLearned},
		{"Recent Updates", s.RecentUpdates},
	} {
		section(&b, sec.title)
		lines := make([]string, len(sec.entries))
		for i, e := range sec.entries {
			lines[i] = e.line()
		}
		bullets(&b, lines)
	}
	return b.String()
}

// line renders e without the leading "- ": "[agent, step] text".
func (e Entry) line() string {
	who := e.Agent
	if e.Step != "" {
		who += ", " + e.Step
	}
	return "[" + who + "] " + e.Text
}
