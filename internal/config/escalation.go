package config

import "github.com/settdev/sett/internal/escalation"

// DefaultEscalationTimeout bounds one run of the escalation hook.
const DefaultEscalationTimeout = Duration(escalation.DefaultTimeout)

// EscalationConfig is the optional hook run when a workflow is escalated
// (escalation in sett.yml): the workflow_escalated event is
// written to its stdin as JSON, for instance to send a mail or a chat
// message. Every key is optional.
type EscalationConfig struct {
	// Command is the hook's command line (argv), run by the orchestrator
	// with its environment minus Redis credentials. Empty: no hook.
	Command []string `yaml:"command"`

	// Timeout bounds one run; then the hook and its process group are
	// killed. Default 10s; must be > 0.
	Timeout Duration `yaml:"timeout"`
}

// Hook returns the settings as an escalation.Hook.
func (e EscalationConfig) Hook() escalation.Hook {
	return escalation.Hook{Command: append([]string(nil), e.Command...), Timeout: e.Timeout.Std()}
}

func (e *EscalationConfig) applyDefaults(c *Config) {
	setDefault(c, &e.Timeout, DefaultEscalationTimeout, "escalation.timeout")
}

func (e *EscalationConfig) validate(v *validator) {
	checkCommand(v, "escalation.command", e.Command)
	positiveDuration(v, "escalation.timeout", e.Timeout)
}
