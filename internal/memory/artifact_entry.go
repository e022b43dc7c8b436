package memory

import "strings"

// ArtifactEntry is one line of an agent memory's Artifact Index: a file the
// agent wrote or relies on, and pointers to the sections that matter, so
// that the next agent reads those sections instead of the whole file
// (the memory and review design's memory-first reading).
//
// A tool may write an entry as an object {"path", "sections", "note"}, or as
// one line in the seed's Markdown form, "path — §A (note), §B (note)". The
// line form is parsed leniently: the path ends at the first em dash, en
// dash, " -- " or " - " (backticks around it are dropped), and what follows
// is split into pointers at the commas that are outside parentheses; each
// pointer is kept as written, note included, in Sections. In both forms a
// section pointer gets a "§" prefix when it lacks one, so that every
// pointer reads the same way.
type ArtifactEntry struct {
	// Path of the artefact file, relative to the workspace; never empty.
	Path string `json:"path"`
	// Sections are the section pointers, such as "§Design" or
	// "§API (endpoints and errors)". May be empty.
	Sections []string `json:"sections,omitempty"`
	// Note says why the file matters; may be empty.
	Note string `json:"note,omitempty"`
}

// Pointers renders the entry's sections and note as one text:
// "§A, §B (note)". It is "" when both are empty.
func (e ArtifactEntry) Pointers() string {
	s := strings.Join(e.Sections, ", ")
	switch {
	case e.Note == "":
		return s
	case s == "":
		return "(" + e.Note + ")"
	}
	return s + " (" + e.Note + ")"
}

// line renders the entry as the memory and review design writes it in a memory file, without
// the leading "- ".
func (e ArtifactEntry) line() string {
	switch p := e.Pointers(); {
	case p == "":
		return e.Path
	case len(e.Sections) == 0:
		return e.Path + " " + p
	default:
		return e.Path + " — " + p
	}
}

// pathSeparators end the path of an entry in line form, in no particular
// order: the earliest one found wins.
var pathSeparators = []string{"—", "–", " -- ", " - "}

// parseEntryLine reads an entry in line form. It returns false when the
// line has no path.
func parseEntryLine(s string) (ArtifactEntry, bool) {
	s = oneLine(s)
	s = strings.TrimSpace(strings.TrimPrefix(s, "- "))
	end, sepLen := len(s), 0
	for _, sep := range pathSeparators {
		if i := strings.Index(s, sep); i >= 0 && i < end {
			end, sepLen = i, len(sep)
		}
	}
	path := strings.Trim(strings.TrimSpace(s[:end]), "`")
	if path == "" {
		return ArtifactEntry{}, false
	}
	e := ArtifactEntry{Path: path}
	if end < len(s) {
		for _, ptr := range splitPointers(s[end+sepLen:]) {
			e.Sections = append(e.Sections, sectionPointer(ptr))
		}
	}
	return e, true
}

// splitPointers splits "§A (a, b), §B" at the commas outside parentheses
// and drops empty pointers.
func splitPointers(s string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if p := strings.TrimSpace(s[start:end]); p != "" {
			out = append(out, p)
		}
	}
	for i, r := range s {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	flush(len(s))
	return out
}

// sectionPointer normalises one section of the object form: one line, with
// a "§" prefix.
func sectionPointer(s string) string {
	s = oneLine(s)
	if s == "" || strings.HasPrefix(s, "§") {
		return s
	}
	return "§" + s
}
