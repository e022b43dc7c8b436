//go:build !linux

package daemon

// HideEnvironment has nothing to do where /proc does not expose another
// process's environment.
func HideEnvironment() error { return nil }
