//go:build !unix

package docker

import "fmt"

// invokingUser is DefaultUser where file ownership is not Unix's.
func invokingUser() string { return DefaultUser }

// checkAccess cannot judge permissions that are not Unix's.
func checkAccess(string, string, bool) string { return "" }

// fileGroup has no Unix group to report: controller agents need a Unix
// Docker host.
func fileGroup(path string) (string, error) {
	return "", fmt.Errorf("the group of %s cannot be read on this system", path)
}
