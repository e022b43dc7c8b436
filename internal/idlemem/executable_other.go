//go:build !linux

package idlemem

// dropExecutablePages has nothing to drop where the daemons do not run in
// production (their images are Linux); the heap is still released.
func dropExecutablePages() (Stats, error) { return Stats{}, nil }
