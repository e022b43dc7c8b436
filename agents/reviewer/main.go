// Command sett-reviewer is an example Sett review tool: it approves the
// target unless a configured condition fails, and then rejects with
// findings the author can act on. It returns an agent memory (status,
// summary, key findings, highest severity) with every review, as the tool
// contract asks of reviewers (docs/review-clusters.md).
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

type options struct {
	require      string
	alwaysReject bool
	approveFrom  int
	// approveSeverity and rejectSeverity are the severities stated with
	// an approval ("" for none) and a rejection, in the review cluster's
	// taxonomy.
	approveSeverity string
	rejectSeverity  string
}

func main() {
	var o options
	flag.StringVar(&o.require, "require", "", "reject until the target's payload mentions this word (case-insensitive)")
	flag.BoolVar(&o.alwaysReject, "always-reject", false, "reject every version")
	flag.IntVar(&o.approveFrom, "approve-from-version", 0, "reject versions below this one (0: no such rule)")
	flag.StringVar(&o.approveSeverity, "approve-severity", "", "severity stated with an approval, such as Minor, Low or PASS (needed under severity_required); default none")
	flag.StringVar(&o.rejectSeverity, "reject-severity", "Major", "severity stated with a rejection, in the cluster's taxonomy (High, FAIL, ...)")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "sett-reviewer:", err)
		os.Exit(1)
	}
}

type review struct {
	Verdict  string   `json:"verdict"`
	Severity string   `json:"severity,omitempty"`
	Findings []string `json:"findings,omitempty"`
}

func run(in io.Reader, out io.Writer, o options) error {
	var input tool.Input
	if err := json.NewDecoder(in).Decode(&input); err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	t := input.TargetArtefact
	var findings []string
	if o.alwaysReject {
		findings = append(findings, "This reviewer rejects every version.")
	}
	if o.require != "" && !strings.Contains(strings.ToLower(t.Payload), strings.ToLower(o.require)) {
		findings = append(findings, fmt.Sprintf("The %s must mention %s.", t.Type, o.require))
	}
	if o.approveFrom > 0 && t.Version < o.approveFrom {
		findings = append(findings, fmt.Sprintf("Version %d is not ready; keep improving it.", t.Version))
	}
	r := review{Verdict: "approve", Severity: o.approveSeverity}
	summary := fmt.Sprintf("approved %s v%d", t.Type, t.Version)
	status := "DONE"
	if len(findings) > 0 {
		r = review{Verdict: "reject", Severity: o.rejectSeverity, Findings: findings}
		summary = fmt.Sprintf("rejected %s v%d: %s", t.Type, t.Version, findings[0])
		status = "NEEDS_REVISION"
	}
	fmt.Fprintf(os.Stderr, "sett-reviewer: %s\n", summary)
	payload, err := json.Marshal(r)
	if err != nil {
		return err
	}
	mem := agentMemory{Status: status, Summary: textcut.Runes(summary, 400), HighestSeverity: r.Severity}
	for i, f := range findings {
		if i == 5 { // the contract's limit; the payload holds them all
			break
		}
		mem.KeyFindings = append(mem.KeyFindings, textcut.Runes(f, 400))
	}
	return json.NewEncoder(out).Encode(answer{ArtefactType: "Review", ArtefactPayload: string(payload), Summary: summary, Memory: mem})
}

// answer is the tool's output.
type answer struct {
	ArtefactType    string      `json:"artefact_type"`
	ArtefactPayload string      `json:"artefact_payload"`
	Summary         string      `json:"summary"`
	Memory          agentMemory `json:"memory"`
}

// agentMemory is the agent memory of the tool contract.
type agentMemory struct {
	Status          string   `json:"status"`
	Summary         string   `json:"summary,omitempty"`
	KeyFindings     []string `json:"key_findings,omitempty"`
	HighestSeverity string   `json:"highest_severity,omitempty"`
}
