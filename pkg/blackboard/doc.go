// Package blackboard is the client API of Sett: what a program needs to
// work with a running instance as a person does with the sett command —
// post a goal, read the artefacts, workflows and claims it led to
// (including a workflow's final artefacts), watch a workflow's events as
// they happen, and decide the approvals that wait for a human.
//
// A program connects with the URL and instance `sett status` shows
// (Dial), with a Redis's topology, TLS and ACL user (DialConn), or as the
// sett command run in a directory does, from the environment, the
// workspace's sett.yml and its instance records (DialEnv).
//
// It is a small facade over the engine (internal/blackboard), which the
// orchestrator and the cubs use; the records a client reads are the
// engine's own types, so nothing is copied or converted. Engine
// operations (claim transitions, timers, leases, leadership, scheduling)
// are not part of this API.
//
// A Client is safe for concurrent use and returns the sentinel errors
// below (wrapped with identifiers): test them with errors.Is.
package blackboard
