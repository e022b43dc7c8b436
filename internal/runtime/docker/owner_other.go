//go:build !unix

package docker

// workspaceUser is DefaultUser where file ownership is not Unix's.
func workspaceUser(string) string { return DefaultUser }
