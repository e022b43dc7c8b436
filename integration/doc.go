// Package integration holds Sett's process-level integration tests: the
// real sett-orchestrator and sett-cub binaries, the example agents and
// shell tools, against a real redis-server. They need no Docker; the
// container tests live in e2e/.
package integration
