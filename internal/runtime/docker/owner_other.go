//go:build !unix

package docker

// invokingUser is DefaultUser where file ownership is not Unix's.
func invokingUser() string { return DefaultUser }

// checkAccess cannot judge permissions that are not Unix's.
func checkAccess(string, string, bool) string { return "" }
