package scaffold_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/scaffold"
)

func TestChooseModel(t *testing.T) {
	cases := []struct {
		name          string
		env           map[string]string
		provider, mdl string
	}{
		{"nothing set: the bundled fake", nil, "fake", "sett-fake"},
		{"an OpenAI key", map[string]string{"OPENAI_API_KEY": "sk-1"}, "openai", "gpt-4o-mini"},
		{"an OpenAI-compatible server", map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "LLM_MODEL": "llama3.1"}, "openai", "llama3.1"},
		{"an Anthropic key", map[string]string{"ANTHROPIC_API_KEY": "sk-ant"}, "anthropic", "claude-sonnet-4-5"},
		{"both keys: OpenAI, as the agent's own default", map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, "openai", "gpt-4o-mini"},
		{"LLM_PROVIDER wins", map[string]string{"LLM_PROVIDER": "Fake", "OPENAI_API_KEY": "o"}, "fake", "sett-fake"},
		{"LLM_PROVIDER and LLM_MODEL", map[string]string{"LLM_PROVIDER": "anthropic", "LLM_MODEL": "claude-haiku"}, "anthropic", "claude-haiku"},
		{"blank values are unset", map[string]string{"OPENAI_API_KEY": "  "}, "fake", "sett-fake"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := scaffold.ChooseModel(func(k string) string { return tc.env[k] })
			if got.Provider != tc.provider || got.Model != tc.mdl || got.Why == "" {
				t.Errorf("ChooseModel = %+v, want %s/%s with a why", got, tc.provider, tc.mdl)
			}
		})
	}
}

// TestVaultConfigLoads checks that the sett.yml of `sett init --vault`
// loads and sets up seed 000's flow: a gate on plans, a learner, the
// model chosen, keys only from the host.
func TestVaultConfigLoads(t *testing.T) {
	for _, m := range []scaffold.ModelChoice{{Provider: "fake", Model: "sett-fake", Why: "x"}, {Provider: "openai", Model: "gpt: 4o", Why: "y"}} {
		p := filepath.Join(t.TempDir(), "sett.yml")
		if err := os.WriteFile(p, scaffold.VaultConfig("my vault", m), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := config.Load(p)
		if err != nil {
			t.Fatalf("%+v: %v", m, err)
		}
		if cfg.Vault.Path != "my vault" || cfg.Orchestrator.Learner != "learner" || len(cfg.Approvals.ArtefactTypes) != 1 || cfg.Approvals.ArtefactTypes[0] != "Plan" {
			t.Errorf("vault %q, learner %q, approvals %v", cfg.Vault.Path, cfg.Orchestrator.Learner, cfg.Approvals.ArtefactTypes)
		}
		for _, name := range []string{"planner", "learner"} {
			a := cfg.Agents[name]
			if a.Environment["LLM_PROVIDER"] != m.Provider || a.Environment["LLM_MODEL"] != m.Model {
				t.Errorf("%s environment %v, want %+v", name, a.Environment, m)
			}
			if len(a.EnvironmentFromHost) != len(scaffold.ModelVars) {
				t.Errorf("%s environment_from_host %v", name, a.EnvironmentFromHost)
			}
			for k := range a.Environment {
				if k == "OPENAI_API_KEY" || k == "ANTHROPIC_API_KEY" {
					t.Errorf("%s: a key is written into sett.yml", name)
				}
			}
		}
	}
}
