package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Plan is what the supervisor runs. Up writes it as JSON to
// <state>/plan.json (mode 0600: the components' secrets hold the Redis
// password); the supervisor reads it once when it starts.
type Plan struct {
	// Instance is the instance name (for logs and the Redis probe).
	Instance string `json:"instance"`
	// StatusPath is where the supervisor writes its Status.
	StatusPath string `json:"status_path"`
	// Components in start order.
	Components []PlanComponent `json:"components"`
}

// PlanComponent is one supervised process.
type PlanComponent struct {
	// Name is "redis", "orchestrator" or an agent name.
	Name string `json:"name"`
	// Stage orders start and stop: the components of stage n+1 start once
	// every component of stage n is ready (or after the supervisor's
	// StageTimeout); on stop the highest stage stops first. Redis is stage
	// 0, the cubs 1, the orchestrator 2.
	Stage int `json:"stage"`
	// Argv is the command line; Argv[0] is an absolute path.
	Argv []string `json:"argv"`
	// Env is the complete environment (os.Environ form). It never holds
	// secrets: those go in Secrets.
	Env []string `json:"env"`
	// Secrets reach the process on an inherited pipe (package secretfd),
	// never through its environment, where tools could read them in
	// /proc/<pid>/environ.
	Secrets map[string]string `json:"secrets,omitempty"`
	// Dir is the working directory.
	Dir string `json:"dir"`
	// LogPath receives stdout and stderr (appended).
	LogPath string `json:"log_path"`
	// HTTPAddr, when set, is probed with GET /readyz for readiness.
	HTTPAddr string `json:"http_addr,omitempty"`
	// RedisURL, when set, is probed with a Redis PING for readiness (the
	// Redis component). A component with neither probe is ready once
	// started.
	RedisURL string `json:"redis_url,omitempty"`
}

// Component returns the named component of the plan.
func (p *Plan) Component(name string) (PlanComponent, bool) {
	for _, c := range p.Components {
		if c.Name == name {
			return c, true
		}
	}
	return PlanComponent{}, false
}

// validate checks what the supervisor relies on.
func (p *Plan) validate() error {
	if len(p.Components) == 0 {
		return errors.New("local: plan has no components")
	}
	if p.StatusPath == "" {
		return errors.New("local: plan has no status path")
	}
	seen := map[string]bool{}
	for _, c := range p.Components {
		switch {
		case c.Name == "":
			return errors.New("local: plan has a component without a name")
		case seen[c.Name]:
			return fmt.Errorf("local: plan names component %q twice", c.Name)
		case len(c.Argv) == 0 || c.Argv[0] == "":
			return fmt.Errorf("local: plan component %q has no command", c.Name)
		case c.LogPath == "":
			return fmt.Errorf("local: plan component %q has no log path", c.Name)
		case c.Stage < 0:
			return fmt.Errorf("local: plan component %q has a negative stage", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// ReadPlan reads and checks a plan file.
func ReadPlan(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("local: read plan: %w", err)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("local: plan %s is corrupt: %w", path, err)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// writePlan writes the plan file (mode 0600).
func writePlan(path string, p *Plan) error {
	if err := p.validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("local: encode plan: %w", err)
	}
	return writeFileAtomic(path, append(b, '\n'), 0o600)
}
