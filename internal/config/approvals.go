package config

import (
	"fmt"
	"path"
	"slices"
	"time"
)

// DefaultApprovalTimeout is how long a gated artefact waits for a human
// before its claim is terminated (the scheduling rules: 24 hours).
const DefaultApprovalTimeout = Duration(24 * time.Hour)

// ApprovalsConfig names the outputs that need a human decision before
// anything acts on them. The zero value gates nothing.
type ApprovalsConfig struct {
	// ArtefactTypes lists artefact types, as path.Match glob patterns
	// ("Plan", "Code*"), whose artefacts wait for approval. Empty: none by
	// type.
	ArtefactTypes []string `yaml:"artefact_types"`

	// Agents lists agents whose outputs wait for approval. Empty: none by
	// agent.
	Agents []string `yaml:"agents"`

	// OnReject is what a rejection does: end (default: the claim is
	// terminated and the workflow ends rejected) or rework (the producer
	// reworks it with the human's reason as feedback, counted against
	// orchestrator.max_review_iterations). Either way Sett learns from it.
	OnReject OnReject `yaml:"on_reject"`

	// Timeout is how long an approval waits before the claim is
	// terminated and the vault item moves to Needs_Human_Review/. Default
	// 24h; 0 means never. A goal's `approval_timeout:` frontmatter field
	// overrides it for that goal's workflow.
	Timeout Duration `yaml:"timeout"`
}

// OnReject says what a human rejection does.
type OnReject string

// The rejection behaviours.
const (
	OnRejectEnd    OnReject = "end"
	OnRejectRework OnReject = "rework"
)

// AllOnRejects lists every rejection behaviour.
func AllOnRejects() []OnReject { return []OnReject{OnRejectEnd, OnRejectRework} }

// Valid reports whether o is a known behaviour.
func (o OnReject) Valid() bool { return slices.Contains(AllOnRejects(), o) }

// Enabled reports whether anything is gated.
func (a ApprovalsConfig) Enabled() bool { return len(a.ArtefactTypes) > 0 || len(a.Agents) > 0 }

// Gates reports whether an artefact of type typ produced by agent (""
// for goals and orchestrator writes) waits for approval.
func (a ApprovalsConfig) Gates(typ, agent string) bool {
	if agent != "" && slices.Contains(a.Agents, agent) {
		return true
	}
	for _, pattern := range a.ArtefactTypes {
		if ok, _ := path.Match(pattern, typ); ok {
			return true
		}
	}
	return false
}

func (a *ApprovalsConfig) applyDefaults(c *Config) {
	if a.OnReject == "" {
		a.OnReject = OnRejectEnd
	}
	if a.Timeout == 0 && !c.src.isSet("approvals.timeout") {
		a.Timeout = DefaultApprovalTimeout
	}
}

func (a *ApprovalsConfig) validate(v *validator, c *Config) {
	const p = "approvals"
	for i, pattern := range a.ArtefactTypes {
		ip := fmt.Sprintf("%s.artefact_types[%d]", p, i)
		if pattern == "" {
			v.addf(ip, "an empty pattern gates nothing (remove it)")
			continue
		}
		if _, err := path.Match(pattern, ""); err != nil {
			v.addf(ip, "%q is not a valid pattern (use path.Match syntax: *, ?, [a-z], \\ to escape)", pattern)
		}
	}
	for i, agent := range a.Agents {
		if _, ok := c.Agents[agent]; !ok {
			v.addf(fmt.Sprintf("%s.agents[%d]", p, i), "%q is not an agent of this file (agents: %v)", agent, c.AgentNames())
		}
	}
	if !a.OnReject.Valid() {
		v.addf(p+".on_reject", "%q is not valid (use end or rework)", a.OnReject)
	}
	if a.Timeout < 0 {
		v.addf(p+".timeout", "%s is not valid (use a duration like 24h, or 0 for never)", a.Timeout)
	}
	o := c.Orchestrator
	if o.Learner != "" {
		if _, ok := c.Agents[o.Learner]; !ok {
			v.addf("orchestrator.learner", "%q is not an agent of this file (agents: %v); name the agent whose tool turns rejections into learnings", o.Learner, c.AgentNames())
		}
	}
}
