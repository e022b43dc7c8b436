package orchestratord

import (
	"os"
	"path/filepath"

	"github.com/settdev/sett/internal/config"
)

// EnvVaultPath overrides vault.path (the Docker runtime mounts the vault
// at a fixed path in the orchestrator's container).
const EnvVaultPath = "SETT_VAULT_PATH"

// vaultPath is the configured vault folder, absolute: SETT_VAULT_PATH,
// else vault.path relative to the folder of sett.yml; "" for none.
func vaultPath(cfg *config.Config, configPath string) string {
	if p := os.Getenv(EnvVaultPath); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	dir := "."
	if configPath != "" {
		dir = filepath.Dir(configPath)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return cfg.Vault.ResolvedPath(dir)
}
