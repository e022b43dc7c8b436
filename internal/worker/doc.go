// Package worker is the launcher of controller-mode agents (see
// "Controller agents" in docs/operations.md): the cub of an agent with mode: controller runs the
// sett-worker binary as its tool, and the launcher runs the real tool in a
// fresh, ephemeral container and removes that container afterwards.
//
// The launcher lives in its own small binary so that the Docker Engine SDK
// is never linked into sett-cub: the cub stays the light sidecar of every
// agent, and only controller containers, which also get the Docker socket,
// carry Docker code at all.
//
// One run of the launcher is one grant: it creates the worker container
// from a Spec (the same hardening as an agent container: the invoking
// non-root uid:gid, no-new-privileges, every capability dropped, a
// read-only root with a tmpfs /tmp, a pids limit, the agent's CPU and
// memory limits, the workspace with the agent's ro/rw mode), attaches to
// it, streams its own stdin in (the JSON tool input), relays the worker's
// stdout and stderr, and exits with the worker's exit code. The worker's
// environment is the launcher's own, which the cub has already scrubbed:
// no Redis credentials, and never the Docker socket, which is not mounted
// into workers.
//
// The cub stops a tool with SIGTERM, then SIGKILL after stop_grace. On
// SIGTERM the launcher stops the worker (Docker's SIGTERM, then SIGKILL
// after Spec.StopTimeout) and removes it. When the cub hands the launcher
// its lease deadlines (SETT_LEASE_FD), each worker also gets a reaper
// (ReapCommand, a process of its own session) that removes it when the
// lease lapses without renewal, whether or not the launcher and the cub
// still run. Without a lease, a launcher killed outright leaves its
// worker behind; every worker carries the launcher's identity
// in a label, and the next launcher of the agent removes workers whose
// launcher is gone before it starts its own (`sett down` removes every
// container of the instance, workers included).
package worker
