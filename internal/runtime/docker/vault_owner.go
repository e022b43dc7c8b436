package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/settdev/sett/internal/runtime"
)

// vaultOwnerAction is what `sett up` does so that the orchestrator can
// write the vault (its bridge is the vault's one writer).
type vaultOwnerAction string

const (
	// vaultAsIs: the containers' user can write the vault already.
	vaultAsIs vaultOwnerAction = "as_is"
	// vaultRunAsOwner: the orchestrator runs as the vault's (non-root)
	// owner, so the files it writes stay that person's.
	vaultRunAsOwner vaultOwnerAction = "run_as_owner"
	// vaultChown: `sett up` runs as root and the vault is root's: it gives
	// the vault to the containers' user (root may; no container runs as
	// root).
	vaultChown vaultOwnerAction = "chown"
)

// vaultOwnerInput is what decides the vault's ownership plan.
type vaultOwnerInput struct {
	// User runs the containers ("uid:gid").
	User string
	// UserExplicit is set when services.containers.user or the runtime's
	// option chose User: then it is kept.
	UserExplicit bool
	// OwnerUID and OwnerGID own the vault folder.
	OwnerUID, OwnerGID int
	// Problem is what User cannot do with the vault ("" when it can read
	// and write all of it).
	Problem string
	// InvokerRoot is set when `sett up` runs as root.
	InvokerRoot bool
	// Path is the vault folder (for the message).
	Path string
}

// planVaultOwner decides how the orchestrator gets to write the vault: as
// it is, as the vault's owner, by a chown when `sett up` runs as root, or
// not at all — an error with the exact command to run.
func planVaultOwner(in vaultOwnerInput) (action vaultOwnerAction, orchestratorUser string, err error) {
	if in.Problem == "" {
		return vaultAsIs, in.User, nil
	}
	if !in.UserExplicit && in.OwnerUID != 0 {
		return vaultRunAsOwner, fmt.Sprintf("%d:%d", in.OwnerUID, in.OwnerGID), nil
	}
	if in.InvokerRoot {
		return vaultChown, in.User, nil
	}
	return "", "", fmt.Errorf("%w: the orchestrator runs as %s and cannot write the vault (%s): give it the vault with `sudo chown -R %s %s`, or set services.containers.user to the vault's owner",
		ErrInvalidSpec, in.User, in.Problem, in.User, shellQuote(in.Path))
}

// shellQuote quotes p for a shell command line when it needs it.
func shellQuote(p string) string {
	if strings.ContainsAny(p, " \t'\"$`\\!*?[]{}()<>|&;#~") {
		return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	return p
}

// vaultOwnership applies planVaultOwner to the configured vault before
// anything is created: it returns the orchestrator's user ("" for the
// containers' user), chowning the vault when `sett up` runs as root and
// the vault is root's, and says what it did through spec.WarnFunc.
func (r *Runtime) vaultOwnership(spec runtime.UpSpec, user string, explicit bool) (string, error) {
	if spec.Config == nil || !spec.Config.Vault.Enabled() || spec.ConfigPath == "" {
		return "", nil
	}
	vp := spec.Config.Vault.ResolvedPath(filepath.Dir(filepath.Clean(spec.ConfigPath)))
	uid, gid, problem, ok := vaultOwnerFacts(vp, user)
	if !ok {
		return "", nil
	}
	action, orch, err := planVaultOwner(vaultOwnerInput{User: user, UserExplicit: explicit, OwnerUID: uid, OwnerGID: gid,
		Problem: problem, InvokerRoot: os.Geteuid() == 0, Path: vp})
	if err != nil {
		return "", err
	}
	warn := func(format string, a ...any) {
		if spec.WarnFunc != nil {
			spec.WarnFunc(fmt.Sprintf(format, a...))
		}
	}
	switch action {
	case vaultRunAsOwner:
		warn("the orchestrator runs as %s, the owner of the vault %s, so that it can write it", orch, vp)
		return orch, nil
	case vaultChown:
		if err := chownVault(vp, user); err != nil {
			return "", fmt.Errorf("%w: give the vault %s to the orchestrator's user %s: %v: run `chown -R %s %s`", ErrInvalidSpec, vp, user, err, user, shellQuote(vp))
		}
		warn("gave the vault %s to %s, the user the orchestrator runs as (it was root's, and no container runs as root)", vp, user)
	}
	return "", nil
}
