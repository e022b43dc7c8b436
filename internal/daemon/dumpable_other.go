//go:build !linux

package daemon

// hideEnvironment has nothing to do where /proc does not expose another
// process's environment.
func hideEnvironment() error { return nil }
