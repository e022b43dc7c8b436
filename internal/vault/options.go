package vault

import "github.com/settdev/sett/internal/config"

// OptionsFrom returns the bridge's options from a loaded sett.yml, for
// the vault at path (already resolved; see config.VaultConfig).
func OptionsFrom(cfg *config.Config, path string) Options {
	return Options{
		Path:               path,
		RescanInterval:     cfg.Vault.RescanInterval.Std(),
		MaxConcurrentTasks: cfg.Vault.MaxConcurrentTasks,
		MaxFileBytes:       cfg.Vault.MaxFileBytes.Int64(),
		Weights:            cfg.Orchestrator.Priority.ScoreWeights(),
		Settle:             cfg.Vault.Settle.Std(),
		Cooldown:           cfg.Vault.Cooldown.Std(),
		Learner:            cfg.Orchestrator.Learner != "",
	}
}
