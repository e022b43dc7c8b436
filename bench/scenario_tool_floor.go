package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/tool"
)

// toolFloor times what no coordination can save: internal/tool.Run (what
// the cub calls, with a scrubbed environment and a goal's tool input on
// stdin) from the call to the no-op tool's main(). Hop minus this floor
// is the coordination overhead.
func (r *runner) toolFloor(ctx context.Context) error {
	goal := blackboard.NewGoal("tool start floor", 0, "user", nil)
	stdin, err := json.Marshal(tool.Input{ClaimID: blackboard.NewID(), ClaimType: tool.ClaimTypeExclusive,
		TargetArtefact: tool.Artefact{ID: goal.ID, LogicalID: goal.ID, Version: 1, StructuralType: string(goal.StructuralType),
			Type: goal.Type, Payload: goal.Payload, ProducedByRole: "user", WorkflowID: goal.ID, Summary: goal.Summary},
		Workflow: tool.Workflow{ID: goal.ID, Goal: goal.Payload}, Instance: "bench", Agent: "noop-1"})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	spec := tool.Spec{Command: []string{r.bins.Noop, "-mode", "terminal", "-type", noopType}, Dir: r.workDir,
		Env: tool.ScrubbedEnv(os.Environ(), nil, map[string]string{"SETT_INSTANCE": "bench", "SETT_AGENT": "noop-1",
			"SETT_CLAIM_ID": "c", "SETT_WORKSPACE": r.workDir}),
		Stdin: stdin, Timeout: time.Minute}
	var starts, runs []float64
	for i := 0; i < r.opts.HopWarmup+r.opts.HopSamples; i++ {
		t := time.Now()
		res := tool.Run(ctx, spec)
		if res.Failure != "" {
			return fmt.Errorf("bench: no-op tool failed: %s: %s", res.Failure, res.Detail)
		}
		out, err := tool.ParseOutput(res.Stdout, tool.ClaimTypeExclusive, 1<<20)
		if err != nil {
			return fmt.Errorf("bench: no-op tool output: %w", err)
		}
		ns, err := strconv.ParseInt(out.ArtefactPayload, 10, 64)
		if err != nil {
			return fmt.Errorf("bench: no-op tool payload %q", out.ArtefactPayload)
		}
		if i >= r.opts.HopWarmup {
			starts = append(starts, ms(time.Unix(0, ns).Sub(t)))
			runs = append(runs, ms(res.Duration))
		}
	}
	f := NewFigure("tool_start_floor", "floor: tool.Run → no-op main() (no Redis)", "ms", "starts", starts, "")
	f.Note = "internal/tool.Run of the no-op tool from the harness process, as the cub runs it (own process group, pipes, scrubbed environment, a goal's input): " +
		"the part of a hop no coordination can save; informational (puts it near 1.2 ms)"
	r.add(f)
	f = NewFigure("tool_run_floor", "floor: whole no-op tool.Run (start → exit → output read)", "ms", "runs", runs, "")
	f.Note = "Result.Duration of the same runs; informational"
	r.add(f)
	return nil
}
