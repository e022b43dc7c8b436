package tool_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/settdev/sett/pkg/tool"
)

// Write a tool: read the input the cub writes on stdin, answer on
// stdout. A real tool's main is the body of answer with os.Stdin; the
// example feeds it the document a cub would write for a review claim.
func Example_writeTool() {
	stdin := strings.NewReader(`{"claim_id": "c1", "claim_type": "review",
		"target_artefact": {"id": "a1", "type": "Plan", "payload": "1. copy 2. drop", "version": 1},
		"context_chain": [], "feedback": [], "workflow": {"id": "w1", "goal": "Migrate the database"},
		"memory": {"shared": "", "upstream": {}}, "instance": "demo", "agent": "reviewer"}`)
	answer(stdin)
	// Output:
	// {"artefact_type":"Review","artefact_payload":"The plan drops the old table before anything reads the new one.","summary":"rejects: drop before switch","structural_type":"Review","memory":{"status":"DONE","summary":"rejected the plan: it drops before it switches"}}
}

// answer is a reviewer tool: a review payload other than {} or an
// approving verdict rejects, and its text is the author's feedback.
func answer(stdin *strings.Reader) {
	in, err := tool.ReadInput(stdin)
	if err != nil {
		fail(err)
		return
	}
	if in.ClaimType != tool.ClaimTypeReview {
		fail(tool.Permanent("this tool only reviews; it got a %s claim", in.ClaimType))
		return
	}
	a := tool.Answer{ArtefactType: "Review", StructuralType: "Review", ArtefactPayload: "{}", Summary: "approves"}
	if strings.Contains(in.TargetArtefact.Payload, "drop") && !strings.Contains(in.TargetArtefact.Payload, "switch") {
		a.ArtefactPayload = "The plan drops the old table before anything reads the new one."
		a.Summary = "rejects: drop before switch"
	}
	a.Memory = &tool.AgentMemory{Status: tool.MemoryDone, Summary: tool.MemoryText("rejected the plan: it drops before it switches")}
	if err := tool.WriteAnswer(os.Stdout, a); err != nil {
		fail(err)
	}
}

// fail prints the failure the cub reads: "retryable": false fails the
// claim at once, true (or left out) lets it try again.
func fail(err error) {
	_ = tool.WriteFailure(os.Stdout, err, nil, tool.NewRedactor(os.Getenv("MY_API_KEY")))
}

// A failure a retry cannot cure, as the cub reads it on stdout.
func ExampleWriteFailure() {
	err := tool.Permanent("the model refused the key %s", "sk-live-0123456789")
	red := tool.NewRedactor("sk-live-0123456789") // the tool's secrets
	_ = tool.WriteFailure(os.Stdout, err, nil, red)
	var f *tool.Failure
	fmt.Println(errors.As(err, &f) && !f.Retryable)
	// Output:
	// {"error":"the model refused the key [REDACTED]","retryable":false}
	// true
}
