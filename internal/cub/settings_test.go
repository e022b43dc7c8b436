package cub

import (
	"slices"
	"testing"

	"github.com/settdev/sett/internal/config"
)

// TestSettingsFromLeavesAControllersCommandToItsArguments: a controller's
// configured command is the worker's; the cub's own tool is the launcher
// the runtime passes as its arguments.
func TestSettingsFromLeavesAControllersCommandToItsArguments(t *testing.T) {
	cfg, _, err := config.Parse([]byte(`version: "1.0"
agents:
  planner:
    command: [sett-writer]
    mode: controller
    worker: {image: sett-example-writer:local, max_concurrent: 3}
  writer:
    command: [sett-writer]
`), "sett.yml")
	if err != nil {
		t.Fatal(err)
	}
	ctl, ok := SettingsFrom(cfg, "planner", "/workspace", "c")
	if !ok || len(ctl.Command) != 0 || ctl.MaxConcurrent != 3 {
		t.Errorf("controller: command %q max_concurrent %d, want none (from the arguments) and worker.max_concurrent 3", ctl.Command, ctl.MaxConcurrent)
	}
	usual, ok := SettingsFrom(cfg, "writer", "/workspace", "c")
	if !ok || !slices.Equal(usual.Command, []string{"sett-writer"}) {
		t.Errorf("usual agent: command %q, want [sett-writer]", usual.Command)
	}
}
