// Package instance records the Sett instances a workspace has started, so
// that later commands (forage, hoard, watch, status, down, logs) find an
// instance's Redis from the current directory without flags.
//
// A record holds the Redis password, so it lives outside every workspace,
// where tools run: at $XDG_STATE_HOME/sett/instances/<name>-<hash>.json
// (default ~/.local/state; directory 0700, file 0600), keyed by the
// instance name and a hash of the workspace. Records that earlier versions
// kept in <workspace>/.sett/instances are still read, and MigrateLegacy
// moves them out.
//
// An instance is a name and a workspace: its record stays after `sett
// down`, marked stopped (MarkStopped), so that the instance keeps its
// runtime and `sett list` and `sett up` know it; `sett down --purge`
// removes it. Find returns running instances only.
package instance
