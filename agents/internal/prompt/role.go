package prompt

import (
	"slices"
	"strings"
)

// Format says what shape of answer a template asks the model for, and so
// how the answer is checked and turned into an artefact payload.
type Format string

// The answer formats.
const (
	// FormatText: the answer is the payload as it is (Markdown), trimmed.
	FormatText Format = "text"
	// FormatVerdict: the answer is the review verdict, a JSON
	// object {"verdict", "severity", "findings"}.
	FormatVerdict Format = "verdict"
	// FormatLearning: the answer is one learning of one or two sentences
	//, kept as one line of text.
	FormatLearning Format = "learning"
	// FormatJSON: the answer is any JSON object, stored as compact JSON.
	FormatJSON Format = "json"
)

// AllFormats returns every valid Format. The slice is new on each call.
func AllFormats() []Format {
	return []Format{FormatText, FormatVerdict, FormatLearning, FormatJSON}
}

// Valid reports whether f is one of AllFormats. The zero value is not
// valid.
func (f Format) Valid() bool { return slices.Contains(AllFormats(), f) }

// Structured reports whether answers of this format are JSON, so that a
// provider should ask for JSON output.
func (f Format) Structured() bool { return f == FormatVerdict || f == FormatJSON }

// Role is what a shipped template produces: the artefact type of its
// answers and their format. The zero value names no role.
type Role struct {
	// Name is the template's name ("planner").
	Name string
	// ArtefactType is the type of the artefacts its answers become.
	ArtefactType string
	// Format is the shape of answer the template asks for.
	Format Format
}

// roles are the shipped templates, in the order help texts list them.
var roles = []Role{
	{Name: "planner", ArtefactType: "Plan", Format: FormatText},
	{Name: "reviewer", ArtefactType: "Review", Format: FormatVerdict},
	{Name: "writer", ArtefactType: "Document", Format: FormatText},
	{Name: "learner", ArtefactType: "Learning", Format: FormatLearning},
	{Name: "summariser", ArtefactType: "Summary", Format: FormatText},
	{Name: "coder", ArtefactType: "CodeCommit", Format: FormatText},
}

// Roles returns the shipped roles. The slice is new on each call.
func Roles() []Role { return slices.Clone(roles) }

// RoleNames returns the names of the shipped roles joined by sep.
func RoleNames(sep string) string {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = r.Name
	}
	return strings.Join(names, sep)
}

// LookupRole returns the shipped role called name.
func LookupRole(name string) (Role, bool) {
	for _, r := range roles {
		if r.Name == name {
			return r, true
		}
	}
	return Role{}, false
}
