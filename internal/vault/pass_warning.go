package vault

import "strings"

// passWarning is the Dashboard's warning for a pass that failed (a file
// or folder Sett cannot write), or "" when it did not.
func passWarning(err error) string {
	if err == nil {
		return ""
	}
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	return "Sett could not keep the vault in step: " + oneLine(msg, 600) +
		". Files here may be stale until this is fixed (`sett status` and `sett errors` say more; for \"permission denied\", see the vault's ownership in docs/vault.md)."
}
