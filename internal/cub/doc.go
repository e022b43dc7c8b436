// Package cub is the sidecar inside every agent container: it registers
// and heartbeats its agent, answers bid requests from its inbox, and runs
// the agent's tool for each grant — building the context chain, feeding
// the tool one JSON document and turning its answer (or its failure) into
// an artefact.
//
// The tool never sees Redis: it gets a scrubbed environment and talks only
// through stdin and stdout (package tool). Bidding never waits for work:
// bid requests are answered while tools run, and grants queue durably in
// the inbox until a worker slot is free.
package cub
