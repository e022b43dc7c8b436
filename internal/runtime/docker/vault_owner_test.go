package docker

import (
	"errors"
	"github.com/settdev/sett/internal/runtime"
	"strings"
	"testing"
)

func TestPlanVaultOwner(t *testing.T) {
	denied := "user 65532:65532 cannot read and enter and write /ws/vault (mode -rwxr-xr-x, owner 0:0)"
	cases := []struct {
		name   string
		in     vaultOwnerInput
		action vaultOwnerAction
		orch   string
		errHas []string
	}{
		{"a vault the containers' user can write", vaultOwnerInput{User: "1000:1000", OwnerUID: 1000, OwnerGID: 1000}, vaultAsIs, "1000:1000", nil},
		{"root's sett up, a person's vault: run as its owner", vaultOwnerInput{User: DefaultUser, OwnerUID: 1000, OwnerGID: 100, Problem: denied, InvokerRoot: true}, vaultRunAsOwner, "1000:100", nil},
		{"root's sett up, root's vault (sett init --vault as root): chown", vaultOwnerInput{User: DefaultUser, OwnerUID: 0, OwnerGID: 0, Problem: denied, InvokerRoot: true}, vaultChown, DefaultUser, nil},
		{"an explicit user is kept; root chowns", vaultOwnerInput{User: "2000:2000", UserExplicit: true, OwnerUID: 1000, Problem: denied, InvokerRoot: true}, vaultChown, "2000:2000", nil},
		{"a normal user cannot chown: the exact command", vaultOwnerInput{User: "1000:1000", OwnerUID: 0, Problem: denied, Path: "/ws/my vault"}, "", "",
			[]string{"sudo chown -R 1000:1000 '/ws/my vault'", "services.containers.user"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			action, orch, err := planVaultOwner(tc.in)
			if tc.errHas != nil {
				if !errors.Is(err, ErrInvalidSpec) {
					t.Fatalf("err = %v, want ErrInvalidSpec", err)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil || action != tc.action || orch != tc.orch {
				t.Errorf("planVaultOwner = %s, %q, %v; want %s, %q", action, orch, err, tc.action, tc.orch)
			}
		})
	}
}

// TestStackPlanRunsTheOrchestratorAsTheVaultOwner: with the vault's owner
// chosen, only the orchestrator runs as that user; the agents keep theirs.
func TestStackPlanRunsTheOrchestratorAsTheVaultOwner(t *testing.T) {
	p, err := newStackPlan(runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml", Config: parseConfig(t, planYAML+"vault:\n  path: vault\n")},
		planInput{User: DefaultUser, OrchestratorUser: "1000:100", RedisPassword: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Orchestrator.User != "1000:100" {
		t.Errorf("orchestrator user %q, want the vault owner's", p.Orchestrator.User)
	}
	for _, a := range p.Agents {
		if a.User != DefaultUser {
			t.Errorf("agent %s runs as %q, want %s", a.Agent, a.User, DefaultUser)
		}
	}
}
