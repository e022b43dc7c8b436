// Package orchestratord wires the sett-orchestrator daemon: its flags, its
// identity for the leader lease, the vault bridge when a vault is
// configured, and its health and metrics server. cmd/orchestrator only
// calls Run. It lives apart from the cub's wiring (cubd) so that sett-cub
// does not link the orchestrator, the vault and their dependencies.
package orchestratord
