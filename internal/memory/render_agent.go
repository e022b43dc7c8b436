package memory

import "strings"

// notApplicable is what an absent severity renders as (the memory and review design's "N/A").
const notApplicable = "N/A"

// none stands in for an empty list, so that every section has a body.
const none = "None"

// RenderAgentMemory renders m in the memory and review design's isolated memory format, the
// content of memory/<agent>.mem.md:
//
//	# Memory: <agent>
//
//	## Status
//
//	<STATUS>: <summary>
//
//	## Key Findings
//
//	- <finding>            (None when there are none)
//
//	## Highest Severity
//
//	<severity>             (N/A when there is none)
//
//	## Decisions Made      (the section is left out when there are none)
//
//	- <decision>
//
//	## Artifact Index
//
//	- <path> — §A (note), §B   (None when there are none)
//
// It ends in a newline. For every memory ParseAgentMemory accepts, the
// result has at most MaxRenderedLines lines. Values are written as they
// are; the agent name is folded to one line.
func RenderAgentMemory(agent string, m AgentMemory) string {
	var b strings.Builder
	b.WriteString("# Memory: " + oneLine(agent) + "\n")

	section(&b, "Status")
	status := string(m.Status)
	if m.Summary != "" {
		status += ": " + m.Summary
	}
	if m.Truncated {
		status += " (memory truncated to fit the contract; the artefact holds the rest)"
	}
	b.WriteString(status + "\n")

	section(&b, "Key Findings")
	bullets(&b, m.KeyFindings)

	section(&b, "Highest Severity")
	sev := m.HighestSeverity
	if sev == "" {
		sev = notApplicable
	}
	b.WriteString(sev + "\n")

	if len(m.Decisions) > 0 {
		section(&b, "Decisions Made")
		bullets(&b, m.Decisions)
	}

	section(&b, "Artifact Index")
	lines := make([]string, len(m.ArtifactIndex))
	for i, e := range m.ArtifactIndex {
		lines[i] = e.line()
	}
	bullets(&b, lines)
	return b.String()
}

// RenderedLines returns how many lines RenderAgentMemory writes for m
// (whatever the agent name).
func RenderedLines(m AgentMemory) int {
	return strings.Count(RenderAgentMemory("", m), "\n")
}

// section writes a level-2 heading with a blank line before and after.
func section(b *strings.Builder, title string) {
	b.WriteString("\n## " + title + "\n\n")
}

// bullets writes one "- " line per item, or None.
func bullets(b *strings.Builder, items []string) {
	if len(items) == 0 {
		b.WriteString(none + "\n")
		return
	}
	for _, s := range items {
		b.WriteString("- " + s + "\n")
	}
}
