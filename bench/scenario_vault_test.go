package bench

import (
	"context"
	"testing"
)

// TestVaultScenario runs the vault scenario alone with smoke counts: it
// must measure both figures (their values mean nothing here).
func TestVaultScenario(t *testing.T) {
	r := &runner{opts: SmokeOptions().withDefaults(), workDir: t.TempDir(), figures: map[string]Figure{}, report: &Report{}}
	if err := r.vaultLatency(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"vault_file_to_goal": r.opts.VaultSamples, "vault_decision_to_applied": r.opts.VaultSamples,
		"vault_settled_to_goal": r.opts.VaultSettleSamples} {
		f, ok := r.figures[name]
		if !ok || f.Samples != n || f.P50 <= 0 {
			t.Errorf("%s: %+v", name, f)
		}
	}
	t.Logf("file→goal p50 %.1f ms, settled (%s) → goal p50 %.1f ms, decision→applied p50 %.1f ms", r.figures["vault_file_to_goal"].P50,
		r.opts.VaultSettle, r.figures["vault_settled_to_goal"].P50, r.figures["vault_decision_to_applied"].P50)
}
