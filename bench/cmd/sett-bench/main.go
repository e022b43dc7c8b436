// Command sett-bench runs the performance harness (`make bench`): it
// prints one table of every performance figure against its target and writes
// the report to <results>/<UTC time>-<commit>.json with the samples as Go
// benchmark lines in <results>/<UTC time>-<commit>.txt (for benchstat).
//
// Exit codes: 0 when every figure was measured (missed targets included),
// 1 when the harness failed, 2 for bad flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/settdev/sett/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("sett-bench", flag.ContinueOnError)
	results := fs.String("results", "bench/results", "directory for the JSON report and the benchmark lines")
	smoke := fs.Bool("smoke", false, "tiny sample counts (seconds; the figures mean nothing, so nothing is written unless -results is given)")
	breakdowns := fs.Bool("breakdowns", false, "also print the breakdowns (hop stages, round trips by request)")
	keep := fs.Bool("keep", false, "keep the work directory (binaries, configs, daemon logs)")
	repo := fs.String("repo", "", "repository root (default: found from the working directory)")
	only := fs.String("only", "", "comma-separated steps to run, for profiling one scenario ("+strings.Join(bench.StepKeys(), ", ")+
		"); nothing is written unless -results is given")
	scaleInFlight := fs.String("scale-inflight", "", "comma-separated workflows in flight for the scale-inflight step, increasing (default 10,1000,10000)")
	scaleAgents := fs.String("scale-agents", "", "comma-separated agents alive for the scale-agents step (default 1,10,100)")
	readArtefacts := fs.Int("scale-read-artefacts", 0, "artefacts stored for the scale-reads step (default 200000; 1000000 seeds for ≈ 1.5–3 min)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	opts := bench.DefaultOptions()
	if *smoke {
		opts = bench.SmokeOptions()
	}
	opts.Progress, opts.KeepWorkDir, opts.RepoRoot = os.Stderr, *keep, *repo
	if *only != "" {
		opts.Only = strings.Split(*only, ",")
	}
	for _, l := range []struct {
		flag, text string
		dst        *[]int
	}{{"-scale-inflight", *scaleInFlight, &opts.ScaleInFlight}, {"-scale-agents", *scaleAgents, &opts.ScaleAgents}} {
		if l.text == "" {
			continue
		}
		levels, err := parseLevels(l.text)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sett-bench: %s %q: %v\n", l.flag, l.text, err)
			return 2
		}
		*l.dst = levels
	}
	if *readArtefacts < 0 {
		fmt.Fprintf(os.Stderr, "sett-bench: -scale-read-artefacts %d: give a positive count (0 for the default)\n", *readArtefacts)
		return 2
	}
	if *readArtefacts > 0 {
		opts.ScaleReadArtefacts = *readArtefacts
	}
	rep, err := bench.Run(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-bench:", err)
		return 1
	}
	if err := rep.WriteTable(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sett-bench:", err)
		return 1
	}
	if *breakdowns {
		_ = rep.WriteBreakdowns(os.Stdout)
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "results" })
	if (*smoke || *only != "") && !explicit {
		return 0
	}
	jsonPath, benchPath, err := rep.WriteFiles(*results)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-bench:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "sett-bench: wrote %s and %s\n", jsonPath, benchPath)
	return 0
}

// parseLevels reads "10,1000,10000": positive, increasing counts.
func parseLevels(text string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(text, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count (use a list like 10,1000,10000)", f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("levels must increase (%d after %d)", n, out[len(out)-1])
		}
		out = append(out, n)
	}
	return out, nil
}
