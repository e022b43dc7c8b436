// Package config loads, defaults and validates sett.yml, the file that
// describes one Sett instance: its orchestrator settings, its agents and the
// Redis it runs on.
//
// The usual sequence, as the CLI and the daemons run it:
//
//	cfg, warnings, err := config.Load("sett.yml") // parse, apply defaults, validate
//	err = cfg.ApplyEnv(os.LookupEnv)            // SETT_* overrides
//	// ... apply command-line flags ...
//	err = cfg.Validate()                          // again, after overrides
//
// Precedence is flags > environment > file > defaults. [Load] and [Parse]
// never read the environment themselves, so callers (and tests) decide
// whether it applies.
//
// Parsing is strict. The YAML tree is checked against the Go types before
// anything is decoded, so an unknown key, a wrong type or a duplicate key is
// reported with its file, line and dotted path, for example
//
//	sett.yml:7: unknown key "bidding_stratgy" in agents.writer (known keys: role, image, ...)
//	sett.yml:4: orchestrator.bid_timeout: "5 seconds" is not a duration (use Go syntax like 5s, 2m, 1h)
//
// and [Config.Validate] reports every broken rule at once, not only the
// first, as a [*ValidationError] holding one [FieldError] per problem.
//
// Durations are written in Go syntax ([Duration]: 5s, 10m, 1h30m) and sizes
// as bytes or with a binary or decimal unit ([ByteSize]: 512KiB, 4MiB,
// 100MB).
//
// A *Config is plain data: safe for concurrent reads, not for concurrent
// writes.
package config
