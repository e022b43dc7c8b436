package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/readchannel"
	"github.com/settdev/sett/internal/textcut"
)

// ReadInput decodes the tool input from r (the cub writes one JSON
// document on stdin). An unknown claim_type is an error: the tool would
// not know what to answer.
func ReadInput(r io.Reader) (Input, error) {
	var in Input
	if err := json.NewDecoder(r).Decode(&in); err != nil {
		return Input{}, Permanent("cannot read the tool input on stdin (the cub writes one JSON document there): %v", err)
	}
	if !in.ClaimType.Valid() {
		return Input{}, Permanent("the tool input has claim_type %q; this tool handles %v", in.ClaimType, AllClaimTypes())
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
	Usage *Usage `json:"usage,omitempty"`
	// Memory is the agent memory of the tool contract (issue 28: every
	// shipped agent leaves one); nil for none (learnings).
	Memory *AgentMemory `json:"memory,omitempty"`
}

// MemoryText cuts s to one line of at most memory.MaxTextLen characters,
// as the memory contract allows.
func MemoryText(s string) string {
	return textcut.Runes(strings.Join(strings.Fields(s), " "), memory.MaxTextLen)
}

// WriteAnswer prints a as one JSON object and a newline.
func WriteAnswer(w io.Writer, a Answer) error {
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("tool: encode answer: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// failureDoc is the contract's form of a failure the tool reports itself.
type failureDoc struct {
	Error     string `json:"error"`
	Retryable *bool  `json:"retryable,omitempty"`
	Usage     *Usage `json:"usage,omitempty"`
}

// WriteFailure prints err as {"error": ..., "retryable": ..., "usage": ...}
// with every secret of red removed. A *Failure says whether it is
// retryable; any other error leaves "retryable" out (the cub counts that
// as transient). usage, when not nil, is what the claim cost before it
// failed.
func WriteFailure(w io.Writer, err error, usage *Usage, red *Redactor) error {
	doc := failureDoc{Error: red.Redact(err.Error()), Usage: usage}
	if f, ok := AsFailure(err); ok {
		r := f.Retryable
		doc.Retryable = &r
	}
	b, mErr := json.Marshal(doc)
	if mErr != nil {
		return fmt.Errorf("tool: encode failure: %w", mErr)
	}
	_, wErr := w.Write(append(b, '\n'))
	return wErr
}

// FetchOmitted puts back, in in's context chain, the payloads the cub
// left out because their authors' memories stand in for them (long plans
// and reports): a model writing from a plan needs its text, not its
// summary. It asks the cub's read channel at socket (the tool's
// SETT_READ_SOCKET). Reviews stay omitted — their memories carry the
// verdict and findings the prompts use. An artefact that cannot be
// fetched keeps a note in place of its payload, and the error is
// returned (the work goes on with what there is).
func FetchOmitted(in *Input, socket string) error {
	var errs []error
	for i := range in.ContextChain {
		a := &in.ContextChain[i]
		if !a.PayloadOmitted || a.StructuralType == "Review" {
			continue
		}
		text, err := fetch(socket, a.ID)
		if err != nil {
			a.Payload = fmt.Sprintf("[%d bytes left out of the input (sections: %s); fetching them failed: %v]",
				a.PayloadBytes, strings.Join(a.Sections, ", "), err)
			errs = append(errs, fmt.Errorf("artefact %s: %w", a.ID, err))
			continue
		}
		a.Payload, a.PayloadOmitted = text, false
	}
	return errors.Join(errs...)
}

// fetch reads one artefact through the read channel at socket.
func fetch(socket, id string) (string, error) {
	if socket == "" {
		return "", fmt.Errorf("no %s in the environment (run by a cub?)", readchannel.EnvSocket)
	}
	return readchannel.Read(socket, id)
}
