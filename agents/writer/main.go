// Command sett-writer is an example Sett agent tool: it writes an artefact
// of a configured type from its goal and context, and on a feedback claim
// writes a revision that addresses every review.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/settdev/sett/internal/textcut"
	"github.com/settdev/sett/internal/tool"
)

func main() {
	typ := flag.String("type", "Plan", "artefact type to produce")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *typ); err != nil {
		fmt.Fprintln(os.Stderr, "sett-writer:", err)
		os.Exit(1)
	}
}

type output struct {
	ArtefactType    string `json:"artefact_type,omitempty"`
	ArtefactPayload string `json:"artefact_payload"`
	Summary         string `json:"summary"`
	// Memory is the agent memory of the tool contract; nil
	// for learnings.
	Memory *agentMemory `json:"memory,omitempty"`
}

// agentMemory is the agent memory a writer returns with its work.
type agentMemory struct {
	Status        string       `json:"status"`
	Summary       string       `json:"summary,omitempty"`
	Decisions     []string     `json:"decisions,omitempty"`
	ArtifactIndex []indexEntry `json:"artifact_index,omitempty"`
}

type indexEntry struct {
	Path     string   `json:"path"`
	Sections []string `json:"sections,omitempty"`
	Note     string   `json:"note,omitempty"`
}

func run(in io.Reader, out io.Writer, typ string) error {
	var input tool.Input
	if err := json.NewDecoder(in).Decode(&input); err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	fmt.Fprintf(os.Stderr, "sett-writer: %s claim %s on %s %s\n", input.ClaimType, input.ClaimID,
		input.TargetArtefact.Type, input.TargetArtefact.ID)
	var o output
	switch input.ClaimType {
	case tool.ClaimTypeFeedback:
		o = revise(input)
	case tool.ClaimTypeLearn:
		o = learn(input)
	default:
		o = write(input, typ)
	}
	return json.NewEncoder(out).Encode(o)
}

// write produces a first version from the goal and the target.
func write(in tool.Input, typ string) output {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nGoal: %s\n\nBased on %s %s:\n\n", typ, firstLine(in.Workflow.Goal),
		in.TargetArtefact.Type, in.TargetArtefact.ID)
	for _, line := range strings.Split(strings.TrimSpace(in.TargetArtefact.Payload), "\n") {
		fmt.Fprintf(&b, "> %s\n", line)
	}
	fmt.Fprintf(&b, "\nSteps:\n1. Understand the goal.\n2. Make the change.\n3. Verify it.\n")
	if len(in.ContextChain) > 0 {
		fmt.Fprintf(&b, "\nContext read: %d artefact(s).\n", len(in.ContextChain))
	}
	if lessons := learningLines(in.Memory.Learnings); len(lessons) > 0 {
		// A real agent would let these shape the plan; the example shows
		// that it received them.
		fmt.Fprintf(&b, "\nLearnings applied:\n")
		for _, l := range lessons {
			fmt.Fprintf(&b, "%s\n", l)
		}
	}
	summary := fmt.Sprintf("%s for: %s", typ, firstLine(in.Workflow.Goal))
	return output{ArtefactType: typ, ArtefactPayload: b.String(), Summary: summary,
		Memory: &agentMemory{Status: "DONE", Summary: textcut.Runes(summary, 400),
			ArtifactIndex: []indexEntry{{Path: typ, Sections: []string{"Steps"}, Note: "the steps of the " + typ}}}}
}

// learn answers a learn claim (a human rejected the target) with one
// learning drawn from the human's reason.
func learn(in tool.Input) output {
	reason := "no reason given"
	if len(in.Feedback) > 0 && strings.TrimSpace(in.Feedback[0].Payload) != "" {
		reason = strings.Join(strings.Fields(in.Feedback[0].Payload), " ")
	}
	return output{ArtefactType: "Learning",
		ArtefactPayload: fmt.Sprintf("When writing a %s, remember why one was rejected: %s", in.TargetArtefact.Type, reason),
		Summary:         "learning from a rejected " + in.TargetArtefact.Type}
}

// learningLines returns the learning bullets of an Agent_Memory.md text.
func learningLines(memory string) []string {
	var out []string
	for _, line := range strings.Split(memory, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "- ") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// revise produces the next version, answering each review.
func revise(in tool.Input) output {
	var b strings.Builder
	b.WriteString(strings.TrimRight(in.TargetArtefact.Payload, "\n"))
	fmt.Fprintf(&b, "\n\n## Revision %d\n\nAddressed review feedback:\n", in.TargetArtefact.Version+1)
	for _, r := range in.Feedback {
		text := reviewText(r.Payload)
		if r.PayloadOmitted {
			// The reviewer left a memory instead (payload_omitted): its
			// key findings stand for the review.
			text = memoryFindings(in.Memory.Upstream[r.ProducedByAgent])
		}
		fmt.Fprintf(&b, "- From %s: %s\n", r.ProducedByRole, text)
	}
	summary := fmt.Sprintf("revision %d addressing %d review(s)", in.TargetArtefact.Version+1, len(in.Feedback))
	return output{ArtefactPayload: b.String(), Summary: summary,
		Memory: &agentMemory{Status: "DONE", Summary: summary,
			Decisions:     []string{fmt.Sprintf("answered %d review(s) in a new section", len(in.Feedback))},
			ArtifactIndex: []indexEntry{{Path: in.TargetArtefact.Type, Sections: []string{fmt.Sprintf("Revision %d", in.TargetArtefact.Version+1)}}}}}
}

// memoryFindings returns the key findings of a rendered agent memory
// (its "## Key Findings" bullets), joined with "; ".
func memoryFindings(rendered string) string {
	var out []string
	in := false
	for _, line := range strings.Split(rendered, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.TrimSpace(line) == "## Key Findings"
		case in && strings.HasPrefix(line, "- "):
			out = append(out, strings.TrimPrefix(line, "- "))
		}
	}
	return strings.Join(out, "; ")
}

// reviewText extracts the findings of a structured review, or returns the
// free text as it is.
func reviewText(payload string) string {
	var doc struct {
		Findings []string `json:"findings"`
	}
	if json.Unmarshal([]byte(payload), &doc) == nil && len(doc.Findings) > 0 {
		return strings.Join(doc.Findings, "; ")
	}
	return strings.TrimSpace(payload)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
