package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// vaultView is the vault bridge's health as `sett status` and `sett
// errors` show it (and their JSON form).
type vaultView struct {
	Path           string `json:"path"`
	OK             bool   `json:"ok"`
	LastError      string `json:"last_error,omitempty"`
	LastErrorAtMs  int64  `json:"last_error_at_ms,omitempty"`
	FailingSinceMs int64  `json:"failing_since_ms,omitempty"`
	LastOKAtMs     int64  `json:"last_ok_at_ms,omitempty"`
	ErrorsTotal    int64  `json:"errors_total"`
}

// collectVault reads the vault health record; nil when no vault bridge
// ever reported.
func collectVault(ctx context.Context, bb *blackboard.Client) (*vaultView, error) {
	h, err := bb.GetVaultHealth(ctx)
	if err != nil || h == nil {
		return nil, err
	}
	return &vaultView{Path: h.Path, OK: h.OK, LastError: h.LastError, LastErrorAtMs: h.LastErrorAtMs,
		FailingSinceMs: h.FailingSinceMs, LastOKAtMs: h.LastOKAtMs, ErrorsTotal: h.ErrorsTotal}, nil
}

// vaultFailingHint says what to do about a failing vault.
const vaultFailingHint = "for \"permission denied\", give the vault to the orchestrator's user (docs/vault.md, \"Who owns the vault\")"

// vaultLine is the Vault row of `sett status`; failing says whether to
// paint it red.
func vaultLine(now time.Time, v *vaultView) (text string, failing bool) {
	if v.OK {
		return v.Path + " · in step", false
	}
	return fmt.Sprintf("%s · FAILING since %s: %s — %s", v.Path, stamp(now, msTime(v.FailingSinceMs)), oneLine(v.LastError), vaultFailingHint), true
}

// stopFileLine is the Stop file row of `sett status`: while a stop file
// exists the instance is (or is about to be) paused, whatever a resume
// said.
func stopFileLine(files []string, paused bool) (text string, warn bool) {
	if len(files) == 0 {
		return "", false
	}
	if paused {
		return fmt.Sprintf("%s exists: the instance stays paused while it does (`sett resume` deletes it)", files[0]), false
	}
	return fmt.Sprintf("%s exists but the instance is not paused: the orchestrator pauses it at its next look (within seconds) unless it is down; `sett resume` deletes the file", files[0]), true
}

// writeVaultProblem is the Vault section of `sett errors`.
func writeVaultProblem(w io.Writer, style outputStyle, r *errorsReport) {
	v := r.Vault
	fmt.Fprintf(w, "  %s: failing since %s (%d failed passes): %s\n  %s\n", v.Path, stamp(style.Now(), msTime(v.FailingSinceMs)), v.ErrorsTotal,
		style.paint(colourRed, oneLine(v.LastError)), vaultFailingHint)
}
