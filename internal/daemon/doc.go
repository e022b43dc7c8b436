// Package daemon is the process bootstrap the orchestrator and cub daemons
// share: flags and environment, sett.yml, logging, the Redis connection
// (retried while Redis starts), hiding the environment and the release of
// start-up memory. Each daemon's wiring lives in a package of its own
// (cubd, orchestratord) so that neither binary links, or initialises at
// start, the other's packages and dependencies.
package daemon
