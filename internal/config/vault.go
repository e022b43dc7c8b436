package config

import (
	"path/filepath"
	"time"
)

// Vault defaults.
const (
	DefaultVaultRescanInterval    = Duration(30 * time.Second)
	DefaultVaultMaxConcurrentTask = 2
	DefaultVaultMaxFileBytes      = 1 * MiB
	DefaultVaultSettle            = Duration(2 * time.Second)
)

// VaultConfig is the optional Obsidian-style vault: a folder of
// Markdown files that the leading orchestrator mirrors the blackboard
// into and reads tasks and decisions from. The zero value (no path) means
// no vault.
type VaultConfig struct {
	// Path is the vault folder, absolute or relative to the folder of
	// sett.yml. Empty: no vault. Overridden by SETT_VAULT_PATH (the Docker
	// runtime mounts the vault there).
	Path string `yaml:"path"`

	// RescanInterval is how often every vault folder is read again even
	// without file events (some file systems and bind mounts deliver
	// none). Default 30s; must be > 0.
	RescanInterval Duration `yaml:"rescan_interval"`

	// MaxConcurrentTasks bounds how many task files from Needs_Action/
	// are in progress at once; the rest wait there, highest priority
	// first (the scheduling rules). Default 2; 0 means no limit.
	MaxConcurrentTasks int `yaml:"max_concurrent_tasks"`

	// MaxFileBytes is the largest task or decision file the vault reads;
	// a larger one is refused and listed on Dashboard.md. Default 1MiB;
	// must be at least 1KiB.
	MaxFileBytes ByteSize `yaml:"max_file_bytes"`

	// Settle is how long a task file in Needs_Action/ must stay unchanged
	// (size and modification time) before Sett reads it, so that a note
	// still being typed or copied is not taken half-written. Default 2s;
	// 0 reads a file as soon as it is seen.
	Settle Duration `yaml:"settle"`

	// Cooldown is the least time between two task starts from the vault
	// (pacing). Default 0: no cooldown.
	Cooldown Duration `yaml:"cooldown"`
}

// Enabled reports whether a vault is configured.
func (v VaultConfig) Enabled() bool { return v.Path != "" }

// ResolvedPath returns Path made absolute against configDir (the folder
// of sett.yml); "" when no vault is configured.
func (v VaultConfig) ResolvedPath(configDir string) string {
	if v.Path == "" {
		return ""
	}
	p := v.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(configDir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return filepath.Clean(p)
}

func (v *VaultConfig) applyDefaults(c *Config) {
	setDefault(c, &v.RescanInterval, DefaultVaultRescanInterval, "vault.rescan_interval")
	setDefault(c, &v.MaxConcurrentTasks, DefaultVaultMaxConcurrentTask, "vault.max_concurrent_tasks")
	setDefault(c, &v.MaxFileBytes, DefaultVaultMaxFileBytes, "vault.max_file_bytes")
	setDefault(c, &v.Settle, DefaultVaultSettle, "vault.settle")
}

func (v *VaultConfig) validate(val *validator) {
	positiveDuration(val, "vault.rescan_interval", v.RescanInterval)
	if v.MaxConcurrentTasks < 0 {
		val.addf("vault.max_concurrent_tasks", "%d is not valid (use a positive number, or 0 for no limit)", v.MaxConcurrentTasks)
	}
	if v.Settle < 0 {
		val.addf("vault.settle", "%s is negative (use e.g. 2s, or 0 to read files at once)", v.Settle)
	}
	if v.Cooldown < 0 {
		val.addf("vault.cooldown", "%s is negative (use e.g. 30s, or 0 for none)", v.Cooldown)
	}
	if v.MaxFileBytes < 1*KiB {
		val.addf("vault.max_file_bytes", "%s is too small (use at least 1KiB)", v.MaxFileBytes)
	}
}
