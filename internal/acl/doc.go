// Package acl writes the Redis ACL users of one Sett instance: the
// orchestrator, one user per agent's cubs, the people's user (human: goals,
// approvals, pause/resume, retry, cancel) and a read-only user (reader:
// `sett hoard`, `watch`, the console's pages, redis-cli diagnostics). Each
// user sees only its instance's keys and channels, and none can run
// FLUSHALL, CONFIG, KEYS, DEBUG or the other commands Redis files as
// dangerous.
//
// A cub's and the human's write access is given per key family with ACL
// selectors (Redis 7.0+), command by command: artefacts are write-once
// (HSETNX), a cub touches the workflow hash's counters only (HINCRBY) and
// appends to the event log (XADD), and neither can write the leader lease
// or the epoch. What a script does beyond single writes (lead, end a
// workflow, decide, pause, retry, purge) is a privilege the script checks
// (see the Priv constants and internal/blackboard/scripts/lib.lua).
//
// The rules are plain `ACL SETUSER` arguments, so the runtimes apply them
// to the Redis they start and `sett acl print` hands them to the operator of
// an external Redis. docs/security.md says what each user can and cannot do.
package acl
