// Package local is the runtime that runs a Sett instance as processes on
// the host (`sett up --runtime local`): a redis-server from PATH, the
// sett-orchestrator and one sett-cub per agent, for machines without
// Docker and for fast development and benchmarks.
//
// # Processes
//
// Up does not keep the processes itself: it starts a detached supervisor
// (`sett supervise --plan FILE`, in its own session, so it outlives the
// `sett up` that started it) and waits until every component is ready.
// The supervisor starts the components in stages — Redis, then the cubs,
// then the orchestrator, each stage once the previous one is ready, so
// that the orchestrator's first look at agent liveness already sees every
// agent — restarts a component that exits unexpectedly (exponential
// backoff, see Backoff), and on SIGTERM stops the components in reverse
// stage order (SIGTERM, then SIGKILL of the process group after
// StopTimeout), Redis last.
//
// # State
//
// Everything an instance owns lives under its state directory
// <state home>/local/<name>-<hash>/ ($XDG_STATE_HOME/sett, default
// ~/.local/state/sett, mode 0700: outside the workspace, where tools run;
// a directory left in <workspace>/.sett/local/<name> by an earlier version
// is moved there by the next Up):
//
//	redis/              Redis data (append-only file); kept by Down, removed by purge
//	redis.password      the generated Redis password (mode 0600); kept with the data
//	redis.conf          the Redis configuration (mode 0600: it holds the password)
//	redis.sock          Redis' Unix socket (mode 0700): the daemons connect through it, since a
//	                    round trip over it costs a third of one over loopback TCP; the CLI and
//	                    redis-cli use the loopback port (a state directory whose path is too
//	                    long for a socket address, over 107 bytes, gets TCP only)
//	plan.json           what the supervisor runs (mode 0600: it holds the daemons' secrets, which reach them through a pipe, never their environment)
//	run/<agent>/        the cub's ledger of running tools (tool.Ledger)
//	status.json         written by the supervisor: the current pid, state and restarts of each component
//	logs/<component>.log, logs/supervisor.log
//
// A later Up of the same name reuses the data and the password, so the
// audit trail survives `sett down` / `sett up`.
//
// # Differences from the Docker runtime
//
// Everything runs as the user who ran `sett up`, on loopback ports chosen
// at each Up. Where Linux namespaces are available (root, or unprivileged
// user namespaces) each tool runs in a sandbox (tool.Sandbox): the state
// home is hidden, /proc shows only the tool's processes, and an agent's
// workspace.mode of ro is a read-only bind mount. Elsewhere tools run
// directly, can read the state home, and ro is not enforced; Up says so
// (WarnFunc). Resource limits are never applied. With services.redis.url set no Redis
// is started, and Down never deletes anything from that Redis.
//
// The package is Unix-only at run time; elsewhere Up returns
// ErrUnsupported.
package local
