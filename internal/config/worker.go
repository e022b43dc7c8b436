package config

import (
	"slices"
	"strings"
	"unicode"
)

// AgentMode is how an agent runs its granted claims.
type AgentMode string

// Agent modes. The zero value is the usual mode: the cub runs the tool in
// its own container.
const (
	// ModeController runs each granted claim (review, parallel, exclusive
	// and feedback claims alike) in a fresh, ephemeral worker container
	// that is removed afterwards.
	ModeController AgentMode = "controller"
)

// AllAgentModes lists every agent mode that may be written in a file.
func AllAgentModes() []AgentMode { return []AgentMode{ModeController} }

// Valid reports whether m is a known mode; "" (the usual mode) is valid.
func (m AgentMode) Valid() bool { return m == "" || slices.Contains(AllAgentModes(), m) }

// DefaultWorkerMaxConcurrent is how many worker containers a controller
// agent runs at once when neither worker.max_concurrent nor
// max_concurrent says.
const DefaultWorkerMaxConcurrent = 1

// WorkerConfig configures the worker containers of an agent in mode
// controller. Every key is refused without mode: controller.
type WorkerConfig struct {
	// Image is the image each worker container runs. Required in
	// controller mode; it must be present on the Docker host (nothing is
	// pulled by the worker launcher).
	Image string `yaml:"image"`

	// Command is the tool's command line (argv) in the worker container;
	// it replaces the image's entrypoint and CMD. Default: the agent's
	// command. One of the two is required in controller mode.
	Command []string `yaml:"command"`

	// MaxConcurrent is how many worker containers run at once, which is
	// how many claims the agent works on at once: in controller mode it
	// sets the agent's max_concurrent (writing both with different values
	// is refused). Default: max_concurrent when that is written, else 1.
	MaxConcurrent int `yaml:"max_concurrent"`
}

// IsZero reports whether no worker key is set.
func (w WorkerConfig) IsZero() bool {
	return w.Image == "" && len(w.Command) == 0 && w.MaxConcurrent == 0
}

// IsController reports whether the agent runs its claims in worker
// containers.
func (a AgentConfig) IsController() bool { return a.Mode == ModeController }

// WorkerCommand is the command each worker container runs:
// worker.command, or the agent's command.
func (a AgentConfig) WorkerCommand() []string {
	if len(a.Worker.Command) > 0 {
		return a.Worker.Command
	}
	return a.Command
}

// applyWorkerDefaults makes worker.max_concurrent and max_concurrent one
// number in controller mode, so that the orchestrator's grant limit and the
// cub's tool limit both bound the workers. It runs after the agent's own
// defaults; p is the agent's path.
func (a *AgentConfig) applyWorkerDefaults(c *Config, p string) {
	if !a.IsController() {
		return
	}
	if a.Worker.MaxConcurrent == 0 && !c.src.isSet(p+".worker.max_concurrent") {
		a.Worker.MaxConcurrent = DefaultWorkerMaxConcurrent
		if c.src.isSet(p + ".max_concurrent") {
			a.Worker.MaxConcurrent = a.MaxConcurrent
		}
	}
	// worker.max_concurrent wins unless max_concurrent was written too
	// (then validateWorker reports a difference). An invalid
	// worker.max_concurrent is left for validateWorker alone to report.
	if a.Worker.MaxConcurrent >= 1 && !c.src.isSet(p+".max_concurrent") {
		a.MaxConcurrent = a.Worker.MaxConcurrent
	}
}

// validateWorker checks mode and the worker keys; p is the agent's path.
func (a *AgentConfig) validateWorker(v *validator, p string) {
	if !a.Mode.Valid() {
		v.addf(p+".mode", "%q is not valid (use controller, or leave mode out to run the tool in the agent's container)", a.Mode)
		return
	}
	if !a.IsController() {
		if !a.Worker.IsZero() {
			v.addf(p+".worker", "worker settings need mode: controller (add `mode: controller` to agent %q, or remove its worker section)", a.Name)
		}
		return
	}
	w := p + ".worker"
	switch {
	case a.Worker.Image == "":
		v.addf(w+".image", "required with mode: controller (the image each worker container runs, such as sett-example-writer:local)")
	case strings.IndexFunc(a.Worker.Image, unicode.IsSpace) >= 0:
		v.addf(w+".image", "%q is not a valid image reference (it contains spaces)", a.Worker.Image)
	}
	checkCommand(v, w+".command", a.Worker.Command)
	if len(a.WorkerCommand()) == 0 {
		v.addf(w+".command", "required with mode: controller when the agent has no command (the command each worker container runs)")
	}
	atLeastOne(v, w+".max_concurrent", a.Worker.MaxConcurrent)
	if a.Worker.MaxConcurrent >= 1 && a.MaxConcurrent != a.Worker.MaxConcurrent {
		v.addf(p+".max_concurrent", "%d differs from worker.max_concurrent %d: in controller mode they are the same limit (write only worker.max_concurrent)", a.MaxConcurrent, a.Worker.MaxConcurrent)
	}
}

// ControllerAgents returns the names of the agents in mode: controller,
// sorted.
func (c *Config) ControllerAgents() []string {
	var out []string
	for _, name := range c.AgentNames() {
		if c.Agents[name].IsController() {
			out = append(out, name)
		}
	}
	return out
}
