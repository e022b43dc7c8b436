// Package vault mirrors an instance into a folder of Markdown files that
// people read and edit with any editor (Obsidian in the learning loop), and reads
// their tasks and decisions back.
//
// The vault is a projection, never the source of truth: the Bridge, run
// by the leading orchestrator only, turns task files into goals and file
// moves into approval decisions through internal/blackboard, and rewrites
// every other file from Redis; Rebuild regenerates them all. The Bridge
// is the one writer of every file it produces, and each write is atomic
// (renameio: temp file, fsync, rename).
package vault
