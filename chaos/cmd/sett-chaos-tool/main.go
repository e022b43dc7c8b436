// Command sett-chaos-tool is the tool of the chaos campaign (chaos/). It
// appends a start stamp and an end stamp for every run to a file (one
// O_APPEND write each, so concurrent runs never interleave a line), so the
// campaign can find grants whose tool ran twice at once, and answers like
// the bench's no-op tool.
//
// Modes (-mode): standard (a Standard artefact), terminal (a Terminal
// artefact), review-reject-v1 (rejects version 1 of its target, approves
// later versions). -sleep-max makes each run last a duration derived from
// its claim id, between 0 and that bound: long tools, reproducibly.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strconv"
	"time"
)

func main() {
	mode := flag.String("mode", "terminal", "standard, terminal or review-reject-v1")
	typ := flag.String("type", "ChaosWork", "artefact_type of the output")
	stamps := flag.String("stamps", "", "file the start and end stamps are appended to")
	sleepMax := flag.Duration("sleep-max", 0, "longest run (derived from the claim id)")
	flag.Parse()
	os.Exit(run(*mode, *typ, *stamps, *sleepMax))
}

// aliveStep is how often a sleeping tool stamps that it is still alive;
// the checker (chaos.doubleRuns) takes a killed run to have died within
// one step of its last stamp.
const aliveStep = 50 * time.Millisecond

func run(mode, typ, stamps string, sleepMax time.Duration) int {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-chaos-tool: read stdin:", err)
		return 1
	}
	var doc struct {
		ClaimID string `json:"claim_id"`
		Agent   string `json:"agent"`
		Target  struct {
			Version int `json:"version"`
		} `json:"target_artefact"`
	}
	if err := json.Unmarshal(in, &doc); err != nil {
		fmt.Fprintln(os.Stderr, "sett-chaos-tool: tool input is not JSON:", err)
		return 1
	}
	stamp := func(kind string) {
		if stamps == "" {
			return
		}
		f, err := os.OpenFile(stamps, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return
		}
		defer f.Close()
		// The parent is the cub: when the campaign kills it, the kernel
		// kills this run too (the parent-death signal), and the checker
		// ends the run there.
		fmt.Fprintf(f, "%s %s %s %d %d %d\n", kind, doc.ClaimID, doc.Agent, os.Getpid(), time.Now().UnixNano(), os.Getppid())
	}
	stamp("S")
	if sleepMax > 0 {
		h := fnv.New64a()
		h.Write([]byte(doc.ClaimID))
		// Sleep in steps, stamping "A" (alive) after each: a run killed
		// mid-sleep leaves no end stamp, and its last "A" bounds when it
		// died (within one step), so the checker needs no worst case.
		until := time.Now().Add(time.Duration(h.Sum64() % uint64(sleepMax)))
		for d := time.Until(until); d > 0; d = time.Until(until) {
			time.Sleep(min(d, aliveStep))
			stamp("A")
		}
	}
	out := map[string]any{"artefact_type": typ, "artefact_payload": "chaos", "summary": "chaos (" + mode + ")"}
	switch mode {
	case "terminal":
		out["structural_type"] = "Terminal"
	case "standard":
		out["artefact_payload"] = "draft " + strconv.Itoa(doc.Target.Version)
	case "review-reject-v1":
		out["artefact_payload"] = map[string]any{}
		if doc.Target.Version <= 1 {
			out["artefact_payload"] = map[string]any{"verdict": "reject", "severity": "Major",
				"findings": []string{"chaos: version 1 is always sent back once"}}
		}
	case "review-approve":
		out["artefact_payload"] = map[string]any{}
	default:
		fmt.Fprintf(os.Stderr, "sett-chaos-tool: unknown -mode %q\n", mode)
		return 2
	}
	stamp("E")
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}
