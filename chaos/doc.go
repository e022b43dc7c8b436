// Package chaos is the seeded, bounded fault campaign of `make chaos`
// (issue 14): real sett-orchestrator and sett-cub processes and a real
// redis-server with append-only persistence run a mix of workflows
// (feedback loops, parallel reviewers, long tools, two replicas of one
// agent) while a driver kills the orchestrator, a cub or Redis at seeded
// points, and toxiproxy (used as a library, in process) between the
// daemons and Redis adds latency, resets connections and partitions them
// for a few seconds. Afterwards the invariants are checked from Redis
// alone (and the tools' start/end stamps) and printed as one table.
package chaos
