//go:build !unix

package coder

// lock does nothing where flock is missing: runs of one workflow are not
// kept apart there (the coder is meant for Linux containers).
func (r *Repo) lock(string) (func(), bool, error) { return func() {}, false, nil }
