// Package bench is Sett's performance harness (`make bench`).
//
// Run builds the real sett-orchestrator and sett-cub binaries and a static
// no-op tool (cmd/sett-bench-noop), starts them as processes against a
// redis-server of their own — the way the local runtime runs a stack:
// append-only Redis with a password, the daemons on its Unix socket, JSON
// logs at info level — and
// measures every performance figure that a stack can show: hop overhead,
// end-to-end latency, throughput, feedback-claim latency, context chains,
// `hoard` listing and short-id resolution at 100 000 artefacts, idle RSS
// and CPU, and Redis round trips per claim. Each figure states its sample
// count, percentiles and the target it is judged against.
//
// Latencies come from the host clock: the harness notes the time right
// after its own write returns, and the no-op tool reports the time its
// main function began. Events are observed with blocking reads of the
// event stream. Round trips are counted exactly by a small proxy that sits
// between each daemon and Redis in a separate, untimed pass (see
// RoundTripProxy); Redis' own view (INFO commandstats) is reported next to
// it.
//
// TestSmoke runs the whole harness with tiny sample counts inside `go test`
// so that it cannot rot; it asserts that every figure has samples, never a
// timing.
package bench
