// Package cubd wires the sett-cub daemon: its flags, the tool isolation it
// sets up before any tool runs, the cub's services and its health and
// metrics server. cmd/cub only calls Run.
package cubd
