// Package instance records the Sett instances a workspace has started, so
// that later commands (forage, hoard, watch, status, down, logs) find an
// instance's Redis from the current directory without flags.
//
// A record lives at <workspace>/.sett/instances/<name>.json (mode 0600: it
// holds the Redis password), and a pointer to it at
// $XDG_STATE_HOME/sett/instances/<name>.json (default ~/.local/state) so
// that `sett list` sees instances of every workspace.
package instance
