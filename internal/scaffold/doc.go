// Package scaffold holds the files `sett init` writes into a new
// workspace — a sett.yml that runs unchanged with `sett up`, and a tiny
// example agent with a guide to writing one's own — embedded in the
// binary, and writes them without overwriting anything unless asked to.
package scaffold
