// Package daemon is the process bootstrap shared by the orchestrator and
// cub binaries: flags and environment, sett.yml, logging, the Redis
// connection (retried while Redis starts) and the health/metrics server.
// The binaries in cmd/ only call RunOrchestrator or RunCub.
package daemon
