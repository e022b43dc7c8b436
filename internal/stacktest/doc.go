// Package stacktest runs a real Sett stack for tests: the actual
// sett-orchestrator and sett-cub binaries (built once per test process)
// as child processes against a real redis-server, with helpers to post
// goals, wait for outcomes, and kill or restart any component.
//
// Process logs go to files in the test's temp directory and are printed
// when the test fails.
package stacktest
