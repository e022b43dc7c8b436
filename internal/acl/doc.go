// Package acl writes the Redis ACL users of one Sett instance: the
// orchestrator, one user per agent's cubs and a read-only user for
// `sett hoard`, `watch`, `status` and redis-cli diagnostics. Each user sees
// only its instance's keys and channels, and none can run FLUSHALL,
// CONFIG, KEYS, DEBUG or the other commands Redis files as dangerous.
//
// The rules are plain `ACL SETUSER` arguments, so the runtimes apply them
// to the Redis they start and `sett acl print` hands them to the operator of
// an external Redis.
package acl
