// Package blackboard is Sett's shared state: the typed records (artefacts,
// claims, bids, workflows), the Redis key layout, the Lua scripts that change
// state atomically, and the event log.
//
// It is the only package in Sett that talks to Redis. Every multi-key write
// goes through one Lua script so that a crash can never leave partial state;
// reads are pipelined where several keys are needed. Callers never see
// go-redis errors such as redis.Nil: they get the sentinel errors in
// errors.go (ErrNotFound, ErrExists, ErrVersionConflict, ...).
//
// It is the engine: the orchestrator, the cubs and the sett command use
// it directly. Programs outside Sett use the client API of
// pkg/blackboard, a small facade over it.
//
// Keys are readable in redis-cli: `sett:<instance>:artefact:<id>` and so on
// (see keys.go), or `sett:{<instance>}:...` with the hash-tag option so that
// an instance lives in a single Redis Cluster slot.
package blackboard
