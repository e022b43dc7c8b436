package connect

import (
	"fmt"
	"os"

	"github.com/settdev/sett/internal/config"
)

// LearnerConfigured reports whether the sett.yml of workspace names a
// learner (orchestrator.learner): an agent that works out the learning of
// a rejection given without a reason (blackboard.Decision.ReasonOptional).
// It is the rule `sett reject` without --reason applies. A missing file
// names none; a file the loader refuses names none too, and the error
// says why (the CLI leaves it out, the client API shows it).
func LearnerConfigured(workspace string) (bool, error) {
	path := configPath(workspace)
	if _, err := os.Stat(path); err != nil {
		return false, nil
	}
	cfg, _, err := config.Load(path)
	if err != nil {
		return false, fmt.Errorf("%s cannot be read: %w", path, err)
	}
	return cfg.Orchestrator.Learner != "", nil
}
