// Package learningsfile reads and writes Agent_Memory.md, the human-editable
// list of learnings Sett draws from rejected work (the learning loop).
//
// The file starts from a starter template (a title, a one-line purpose and
// a "## Patterns" section) and gains one line per rejection:
//
//   - **2026-02-16T14:30:00Z** — Rejected plan for "Invoice #99": Don't offer payment timelines.
//
// Sett only ever appends to the end of the file and never rewrites what is
// there: a human may edit, reorder or delete lines, and every agent reads
// the file as the human left it. Append is atomic (a temporary file in the
// same folder, fsync, rename, fsync of the folder), so a reader sees the
// old file or the new one, never half of it.
package learningsfile
