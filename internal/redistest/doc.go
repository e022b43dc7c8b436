// Package redistest gives integration tests a real redis-server: one child
// process per test package, started on first use on a free loopback port,
// and a fresh Sett instance name per test so that tests run in parallel
// without FLUSHDB.
//
// It also starts the production-shaped deployments (Topology: a Redis
// Cluster, a Sentinel-managed master with a replica, a TLS-only node with
// client certificates) that the integration suite, the CLI tests and the
// bench (`make bench`) run Sett against, each described as a
// blackboard.Conn and as the services.redis section of sett.yml.
//
// A missing redis-server binary fails the test with an install hint; it is
// never a silent skip. Only `go test -short` skips integration tests.
package redistest
