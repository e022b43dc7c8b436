package docker

import (
	"slices"
	"testing"

	"github.com/moby/moby/api/types/mount"
)

func TestStackPlanMountsTheVaultIntoTheOrchestratorOnly(t *testing.T) {
	p := planFor(t, planYAML+"vault:\n  path: notes/vault\n")
	want := mount.Mount{Type: mount.TypeBind, Source: "/ws/notes/vault", Target: "/sett/vault"}
	if !slices.Contains(p.Orchestrator.Mounts, want) {
		t.Errorf("orchestrator mounts %+v, want the vault read-write at /sett/vault", p.Orchestrator.Mounts)
	}
	if v, _ := env(p.Orchestrator, "SETT_VAULT_PATH"); v != "/sett/vault" {
		t.Errorf("orchestrator SETT_VAULT_PATH=%q", v)
	}
	if p.Orchestrator.User != "1000:1000" {
		t.Errorf("orchestrator user %q, want the workspace owner's", p.Orchestrator.User)
	}
	for _, a := range p.Agents {
		hidden := false
		for _, m := range a.Mounts {
			if m.Target == "/sett/vault" || m.Source == "/ws/notes/vault" {
				t.Errorf("agent %s mounts the vault: %+v", a.Agent, m)
			}
			hidden = hidden || (m.Type == mount.TypeTmpfs && m.Target == "/workspace/notes/vault" && m.ReadOnly)
		}
		if !hidden {
			t.Errorf("agent %s sees the vault inside its workspace: %+v", a.Agent, a.Mounts)
		}
	}
	if q := planFor(t, planYAML); len(q.Orchestrator.Mounts) != 1 {
		t.Errorf("without a vault the orchestrator mounts %+v, want only sett.yml", q.Orchestrator.Mounts)
	}
}
