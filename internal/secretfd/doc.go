// Package secretfd hands secrets (the Redis URL with its password) from a
// supervisor to a daemon through an inherited pipe instead of the
// environment: a process's environment stays readable in
// /proc/<pid>/environ for its whole life, by the same user and by root,
// and every tool the daemon starts could look there. The pipe is read
// once at start and closed, so nothing of it outlives the read.
package secretfd
