package scaffold

import (
	"fmt"
	"strings"
)

// The providers the LLM agents of VaultConfig can use (agents/llm).
const (
	ProviderFake      = "fake"
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// ModelChoice is the model the LLM agents of `sett init --vault` use.
type ModelChoice struct {
	// Provider is fake, openai or anthropic.
	Provider string
	// Model is the model's name.
	Model string
	// Why says which variable chose it (for init's output).
	Why string
}

// ModelVars are the variables that pass from the environment of `sett
// up` to the LLM agents (environment_from_host), so that a key is never
// written into sett.yml.
var ModelVars = []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}

// ChooseModel decides the model of `sett init --vault` from init's
// environment: LLM_PROVIDER (fake, openai, anthropic) and LLM_MODEL when
// set; else Anthropic when only ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL is
// set; else OpenAI (or any compatible server) when OPENAI_API_KEY or
// OPENAI_BASE_URL is; else the bundled fake model, which runs inside the
// agent with canned answers.
func ChooseModel(getenv func(string) string) ModelChoice {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	c := ModelChoice{Provider: strings.ToLower(env("LLM_PROVIDER")), Model: env("LLM_MODEL")}
	openai := env("OPENAI_API_KEY") != "" || env("OPENAI_BASE_URL") != ""
	anthropic := env("ANTHROPIC_API_KEY") != "" || env("ANTHROPIC_BASE_URL") != ""
	switch {
	case c.Provider != "":
		c.Why = "LLM_PROVIDER"
	case anthropic && !openai:
		c.Provider, c.Why = ProviderAnthropic, "ANTHROPIC_API_KEY"
	case openai:
		c.Provider, c.Why = ProviderOpenAI, "OPENAI_API_KEY / OPENAI_BASE_URL"
	default:
		c.Provider, c.Why = ProviderFake, "no LLM_PROVIDER, OPENAI_* or ANTHROPIC_* in the environment"
	}
	if c.Model == "" {
		switch c.Provider {
		case ProviderAnthropic:
			c.Model = "claude-sonnet-4-5"
		case ProviderOpenAI:
			c.Model = "gpt-4o-mini"
		default:
			c.Model = "sett-fake"
		}
	} else if c.Why != "LLM_PROVIDER" {
		c.Why += ", LLM_MODEL"
	}
	return c
}

// VaultConfig is the sett.yml of `sett init --vault PATH`: seed 000's flow
// out of the box. A task file becomes a goal; the planner (an LLM agent)
// writes a plan that waits in Pending_Approval/; an approved plan goes to
// the reviewer; a rejected one — moved to Rejected/, with or without a
// reason — ends the workflow and the learner (an LLM agent) turns it into
// a learning in Agent_Memory.md, which every agent reads next time.
func VaultConfig(vaultPath string, m ModelChoice) []byte {
	var s strings.Builder
	fmt.Fprintf(&s, `# sett.yml — written by `+"`sett init --vault %s`"+`: the vault's flow (seed 000).
#
#   Needs_Action/task.md ─▶ planner (LLM) ─▶ Plan in Pending_Approval/ ─▶ you
#     move it to Approved/  ─▶ reviewer ─▶ Done/
#     move it to Rejected/  ─▶ learner (LLM) ─▶ a learning in Agent_Memory.md
#
# A rejection needs no reason: the learner works out what went wrong from
# the plan and the task (a reason you write in the file is used too).
#
# The LLM agents use the model below. LLM_PROVIDER: fake is Sett's bundled
# fake model: canned answers, no key, nothing leaves the machine. For a
# real one set LLM_PROVIDER to openai (OpenAI or any compatible server:
# Ollama, vLLM, LM Studio) or anthropic, LLM_MODEL to the model, and export
# the key (OPENAI_API_KEY or ANTHROPIC_API_KEY; OPENAI_BASE_URL for another
# server) before `+"`sett up`"+`: keys pass from that environment and are
# never stored here. `+"`sett init --vault`"+` chose %s (%s).
version: "1.0"

# Instance name: lowercase letters, digits and '-'. Empty: derived from this
# directory's name.
instance: ""

orchestrator:
  max_review_iterations: 3
  # The agent that turns each rejection into one learning.
  learner: learner

# Plans wait for your decision (move the file, or sett approve / sett reject).
approvals:
  artefact_types: [Plan]
  on_reject: end

agents:
  # Turns each task into a plan (the learnings of Agent_Memory.md in its
  # prompt).
  planner:
    image: sett-agent-llm:local
    command: ["sett-agent-llm", "--template", "planner"]
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
    timeout: 5m
    environment: &llm
      LLM_PROVIDER: %s
      LLM_MODEL: %s
      LLM_TIMEOUT: 4m30s
    environment_from_host: &llmkeys [%s]

  # Checks every approved plan (sett-reviewer approves what it is given;
  # replace it with your own agent).
  reviewer:
    image: sett-example-reviewer:local
    command: ["sett-reviewer"]
    bidding_strategy: review
    consumes: ["Plan"]

  # Turns each rejection into one learning for Agent_Memory.md. It never
  # bids: it only gets the learn claims the orchestrator sends it.
  learner:
    image: sett-agent-llm:local
    command: ["sett-agent-llm", "--template", "learner"]
    bidding_strategy: ignore
    timeout: 5m
    environment: *llm
    environment_from_host: *llmkeys

services:
  redis:
    # Empty: `+"`sett up`"+` starts a Redis with a generated password.
    url: ""

# The vault: drop tasks in Needs_Action/, decide plans by moving files.
vault:
  path: %q
`, vaultPath, m.Provider, m.Why, m.Provider, yamlScalar(m.Model), strings.Join(ModelVars, ", "), vaultPath)
	return []byte(s.String())
}

// yamlScalar quotes s for YAML.
func yamlScalar(s string) string { return fmt.Sprintf("%q", s) }
