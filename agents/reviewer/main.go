// Command sett-reviewer is an example Sett review tool: it approves the
// target unless a configured condition fails, and then rejects with
// findings the author can act on.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/settdev/sett/internal/tool"
)

type options struct {
	require      string
	alwaysReject bool
	approveFrom  int
}

func main() {
	var o options
	flag.StringVar(&o.require, "require", "", "reject until the target's payload mentions this word (case-insensitive)")
	flag.BoolVar(&o.alwaysReject, "always-reject", false, "reject every version")
	flag.IntVar(&o.approveFrom, "approve-from-version", 0, "reject versions below this one (0: no such rule)")
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
	r := review{Verdict: "approve"}
	summary := fmt.Sprintf("approved %s v%d", t.Type, t.Version)
	if len(findings) > 0 {
		r = review{Verdict: "reject", Severity: "Major", Findings: findings}
		summary = fmt.Sprintf("rejected %s v%d: %s", t.Type, t.Version, findings[0])
	}
	fmt.Fprintf(os.Stderr, "sett-reviewer: %s\n", summary)
	payload, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(map[string]string{
		"artefact_type": "Review", "artefact_payload": string(payload), "summary": summary,
	})
}
