package memory

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidMemory is matched (with errors.Is) by every *MemoryError:
// an agent memory that ParseAgentMemory refuses.
var ErrInvalidMemory = errors.New("memory: invalid agent memory")

// ErrSharedVersion is returned (wrapped, with the version found) by
// DecodeShared when the stored shared memory was written by a format this
// package does not know.
var ErrSharedVersion = errors.New("memory: unknown shared memory version")

// MemoryError says why an agent memory was refused. Field is the first
// field at fault, as a path inside the memory object ("status",
// "key_findings", "key_findings[2]", "artifact_index[0].path"), or "memory"
// when the object as a whole is wrong. Fields lists every field at fault,
// in the order found. Reason is one or more sentences for the tool's author
// that name each field and say what is allowed.
//
// MemoryError matches ErrInvalidMemory with errors.Is.
type MemoryError struct {
	Field  string
	Fields []string
	Reason string
}

// Error returns "memory: invalid agent memory: " and the reason.
func (e *MemoryError) Error() string { return "memory: invalid agent memory: " + e.Reason }

// Is reports whether target is ErrInvalidMemory.
func (e *MemoryError) Is(target error) bool { return target == ErrInvalidMemory }

// problems collects what is wrong with one memory, so one error names every
// fault at once.
type problems struct {
	fields  []string
	reasons []string
}

func (p *problems) add(field, format string, args ...any) {
	p.fields = append(p.fields, field)
	p.reasons = append(p.reasons, fmt.Sprintf(format, args...))
}

func (p *problems) any() bool { return len(p.reasons) > 0 }

// err returns nil when nothing was added, else one *MemoryError whose
// reason numbers the problems when there are several.
func (p *problems) err() error {
	switch len(p.reasons) {
	case 0:
		return nil
	case 1:
		return &MemoryError{Field: p.fields[0], Fields: p.fields, Reason: p.reasons[0]}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems:", len(p.reasons))
	for i, r := range p.reasons {
		fmt.Fprintf(&b, " (%d) %s.", i+1, strings.TrimSuffix(r, "."))
	}
	return &MemoryError{Field: p.fields[0], Fields: p.fields, Reason: strings.TrimSuffix(b.String(), ".")}
}
