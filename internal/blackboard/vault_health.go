package blackboard

import (
	"context"
	"fmt"
	"strconv"
)

// VaultHealth is how the leading orchestrator's vault bridge is doing: a
// vault it cannot write (a root-owned folder and an orchestrator running
// as another user) would otherwise show only as log lines. `sett status`,
// `sett errors` and the console read it.
type VaultHealth struct {
	// OK is false while the bridge's passes fail.
	OK bool
	// Path is the vault folder as the orchestrator sees it.
	Path string
	// LastError is the last failed pass's error ("" when none yet).
	LastError string
	// LastErrorAtMs is when the last pass failed (0: never).
	LastErrorAtMs int64
	// FailingSinceMs is when the current run of failures began (0 while
	// OK).
	FailingSinceMs int64
	// LastOKAtMs is when a pass last succeeded (0: never).
	LastOKAtMs int64
	// ErrorsTotal counts the failed passes since the record was created.
	ErrorsTotal int64
}

// ReportVaultPass records the outcome of one vault pass at nowMs: err nil
// for a pass that succeeded. Only changes are written (a failing pass
// rewrites the error and its time, counts it, and keeps the start of the
// run of failures), so that a healthy vault costs one HSET per pass.
func (c *Client) ReportVaultPass(ctx context.Context, path string, nowMs int64, passErr error) error {
	octx, cancel := c.op(ctx)
	defer cancel()
	key := c.keys.VaultHealth()
	now := strconv.FormatInt(nowMs, 10)
	if passErr == nil {
		if err := c.rdb.HSet(octx, key, "ok", "1", "path", path, "last_ok_at_ms", now, "failing_since_ms", "0").Err(); err != nil {
			return fmt.Errorf("blackboard: report vault pass: %w", err)
		}
		return nil
	}
	msg := passErr.Error()
	if len(msg) > 2000 {
		msg = msg[:2000] + "…"
	}
	pipe := c.rdb.TxPipeline()
	pipe.HSet(octx, key, "ok", "0", "path", path, "last_error", msg, "last_error_at_ms", now)
	pipe.HSetNX(octx, key, "failing_since_ms", now)
	pipe.HIncrBy(octx, key, "errors_total", 1)
	if _, err := pipe.Exec(octx); err != nil {
		return fmt.Errorf("blackboard: report vault pass: %w", err)
	}
	// failing_since_ms is "0" after a good pass: start the run now.
	if v, err := c.rdb.HGet(octx, key, "failing_since_ms").Result(); err == nil && v == "0" {
		if err := c.rdb.HSet(octx, key, "failing_since_ms", now).Err(); err != nil {
			return fmt.Errorf("blackboard: report vault pass: %w", err)
		}
	}
	return nil
}

// GetVaultHealth returns the vault bridge's report, or nil when no
// bridge ever reported (no vault, or an older orchestrator).
func (c *Client) GetVaultHealth(ctx context.Context) (*VaultHealth, error) {
	octx, cancel := c.op(ctx)
	defer cancel()
	m, err := c.rdb.HGetAll(octx, c.keys.VaultHealth()).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read vault health: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	n := func(k string) int64 { v, _ := strconv.ParseInt(m[k], 10, 64); return v }
	return &VaultHealth{
		OK: m["ok"] == "1", Path: m["path"], LastError: m["last_error"],
		LastErrorAtMs: n("last_error_at_ms"), FailingSinceMs: n("failing_since_ms"),
		LastOKAtMs: n("last_ok_at_ms"), ErrorsTotal: n("errors_total"),
	}, nil
}
