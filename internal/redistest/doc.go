// Package redistest gives integration tests a real redis-server: one child
// process per test package, started on first use on a free loopback port,
// and a fresh Sett instance name per test so that tests run in parallel
// without FLUSHDB.
//
// A missing redis-server binary fails the test with an install hint; it is
// never a silent skip. Only `go test -short` skips integration tests.
package redistest
