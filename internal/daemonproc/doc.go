// Package daemonproc builds Sett's programs from this repository and runs
// the daemons (sett-orchestrator, sett-cub) as child processes for the
// harnesses that need real processes: internal/stacktest, bench and chaos.
//
// A Process gets its own /healthz, /readyz and /metrics address (the
// --http-addr flag, on a free loopback port), writes its output to a log
// file, is tied to the harness so that it dies with it (internal/tiedchild),
// and can be waited for (/readyz answering 200, failing early when the
// process exits), stopped (SIGTERM, then SIGKILL to its process group after
// a grace period), killed as a crash would, and started again.
package daemonproc
