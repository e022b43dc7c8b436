// Command sett-bench-noop is the no-op tool of the performance harness
// (bench/). It does no work: it reads the tool input, answers at once, and
// reports in its payload the wall clock at which its main function began,
// so that the harness can measure the hop "artefact written → next tool
// process started" on the host clock.
//
// It is built with CGO_ENABLED=0 (a static binary, as the images package
// tools) so that its start costs what a small static tool costs.
//
// Modes (-mode):
//
//	terminal          a Terminal artefact that ends the chain; payload = start ns
//	standard          a Standard artefact (it gets a claim); payload = start ns
//	review-approve    a review with the payload {} (approval)
//	review-reject-v1  rejects version 1 of the target, approves later versions
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

func main() {
	// First thing: the moment the tool's own code starts running.
	start := time.Now().UnixNano()
	mode := flag.String("mode", "terminal", "terminal, standard, review-approve or review-reject-v1")
	typ := flag.String("type", "BenchNoop", "artefact_type of the output")
	flag.Parse()
	os.Exit(run(start, *mode, *typ, os.Stdin, os.Stdout))
}

func run(start int64, mode, typ string, stdin io.Reader, stdout io.Writer) int {
	// The cub writes the whole input before it reads the output; reading
	// it keeps the tool honest (and the review mode needs it).
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-bench-noop: read stdin:", err)
		return 1
	}
	out := map[string]any{
		"artefact_type":    typ,
		"artefact_payload": strconv.FormatInt(start, 10),
		"summary":          "no-op (" + mode + ")",
	}
	switch mode {
	case "terminal":
		out["structural_type"] = "Terminal"
	case "standard":
	case "review-approve":
		out["artefact_payload"] = map[string]any{}
	case "review-reject-v1":
		var doc struct {
			Target struct {
				Version int `json:"version"`
			} `json:"target_artefact"`
		}
		if err := json.Unmarshal(in, &doc); err != nil {
			fmt.Fprintln(os.Stderr, "sett-bench-noop: tool input is not JSON:", err)
			return 1
		}
		out["artefact_payload"] = map[string]any{}
		if doc.Target.Version <= 1 {
			out["artefact_payload"] = map[string]any{
				"verdict": "reject", "severity": "Major",
				"findings": []string{"bench: version 1 is always sent back once"},
			}
		}
	default:
		fmt.Fprintf(os.Stderr, "sett-bench-noop: unknown -mode %q\n", mode)
		return 2
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "sett-bench-noop: write stdout:", err)
		return 1
	}
	return 0
}
