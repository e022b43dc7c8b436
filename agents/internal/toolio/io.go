package toolio

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/tool"
)

// ReadInput decodes the tool input from r (the cub writes one JSON
// document on stdin). An unknown claim_type is an error: the tool would
// not know what to answer.
func ReadInput(r io.Reader) (tool.Input, error) {
	var in tool.Input
	if err := json.NewDecoder(r).Decode(&in); err != nil {
		return tool.Input{}, Permanent("cannot read the tool input on stdin (the cub writes one JSON document there): %v", err)
	}
	if !in.ClaimType.Valid() {
		return tool.Input{}, Permanent("the tool input has claim_type %q; this tool handles %v", in.ClaimType, tool.AllClaimTypes())
	}
	return in, nil
}

// Answer is the one JSON document a tool prints on success.
type Answer struct {
	// ArtefactType may be "" only on feedback claims (the rework keeps
	// the type).
	ArtefactType string `json:"artefact_type,omitempty"`
	// ArtefactPayload is a string, or a json.RawMessage holding a JSON
	// object (the cub stores it as compact JSON text).
	ArtefactPayload any    `json:"artefact_payload"`
	Summary         string `json:"summary,omitempty"`
	StructuralType  string `json:"structural_type,omitempty"`
	// Usage is what the model calls of this claim cost; nil when none.
	Usage *tool.Usage `json:"usage,omitempty"`
	// Memory is the agent memory of the tool contract (issue 28: every
	// shipped agent leaves one); nil for none (learnings).
	Memory *memory.AgentMemory `json:"memory,omitempty"`
}

// MemoryText cuts s to one line of at most memory.MaxTextLen characters,
// as the memory contract allows.
func MemoryText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= memory.MaxTextLen {
		return s
	}
	return string(r[:memory.MaxTextLen-1]) + "…"
}

// WriteAnswer prints a as one JSON object and a newline.
func WriteAnswer(w io.Writer, a Answer) error {
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("toolio: encode answer: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// failureDoc is the contract's form of a failure the tool reports itself.
type failureDoc struct {
	Error     string      `json:"error"`
	Retryable *bool       `json:"retryable,omitempty"`
	Usage     *tool.Usage `json:"usage,omitempty"`
}

// WriteFailure prints err as {"error": ..., "retryable": ..., "usage": ...}
// with every secret of red removed. A *Failure says whether it is
// retryable; any other error leaves "retryable" out (the cub counts that
// as transient). usage, when not nil, is what the claim cost before it
// failed.
func WriteFailure(w io.Writer, err error, usage *tool.Usage, red *Redactor) error {
	doc := failureDoc{Error: red.Redact(err.Error()), Usage: usage}
	if f, ok := AsFailure(err); ok {
		r := f.Retryable
		doc.Retryable = &r
	}
	b, mErr := json.Marshal(doc)
	if mErr != nil {
		return fmt.Errorf("toolio: encode failure: %w", mErr)
	}
	_, wErr := w.Write(append(b, '\n'))
	return wErr
}
