package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/priority"
)

// Goal metadata keys of the priority score: what the person wrote. The
// score computed from them is the goal's Priority (the workflow's and its
// claims' order), not metadata.
const (
	metaPriority = "priority"
	metaDeadline = "deadline"
	metaFrom     = "from"
)

// priorityWeights returns the scoring weights of the workspace's sett.yml
// (orchestrator.priority), or the scheduling rules' defaults when there is no file. A
// file that cannot be read is an error: a goal scored with the wrong
// weights would silently jump or lose its place in the queue.
func priorityWeights(app *App) (priority.Weights, error) {
	path := configPathIn(app.Workspace())
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return priority.DefaultWeights(), nil
	}
	cfg, _, err := config.Load(path)
	if err != nil {
		return priority.Weights{}, usageError("cannot read the priority weights (orchestrator.priority) from %s: %v; fix the file and try again", path, err)
	}
	return cfg.Orchestrator.Priority.ScoreWeights(), nil
}

// scoreGoal computes the goal's priority score from its metadata under
// the workspace's weights, stores it as metadata "score", and returns its
// parts.
func scoreGoal(app *App, meta map[string]string) (priority.Breakdown, error) {
	w, err := priorityWeights(app)
	if err != nil {
		return priority.Breakdown{}, err
	}
	in := priority.Input{Priority: meta[metaPriority], Deadline: meta[metaDeadline], From: meta[metaFrom]}
	b, err := priority.Explain(in, w, app.Now())
	if err != nil {
		return b, usageError("%v: nothing was posted", err)
	}
	return b, nil
}

// explainScore renders a score with its parts: "40 (priority 10 +
// deadline 20 + sender 10)".
func explainScore(b priority.Breakdown) string {
	var parts []string
	if b.Priority != 0 {
		parts = append(parts, fmt.Sprintf("priority %d", b.Priority))
	}
	if b.Deadline != 0 {
		parts = append(parts, fmt.Sprintf("deadline %d", b.Deadline))
	}
	if b.Sender != 0 {
		parts = append(parts, fmt.Sprintf("sender %d", b.Sender))
	}
	if len(parts) == 0 {
		return strconv.Itoa(b.Total)
	}
	return fmt.Sprintf("%d (%s)", b.Total, strings.Join(parts, " + "))
}
