//go:build !unix

package docker

// vaultOwnerFacts cannot judge ownership that is not Unix's.
func vaultOwnerFacts(path, user string) (uid, gid int, problem string, ok bool) {
	return 0, 0, "", false
}

// chownVault has nothing to do where ownership is not Unix's.
func chownVault(path, user string) error { return nil }
