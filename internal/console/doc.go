// Package console is Sett's web console (`sett ui`): server-rendered pages
// over the blackboard — a live list of workflows, one workflow's provenance
// graph (SVG), timeline, diffs and memories, the approvals inbox and the
// control page — with a little hand-written JavaScript for live updates
// and keyboard shortcuts. Assets are embedded; nothing is built with Node.
//
// New returns a plain http.Handler a Go program can mount. Every request
// needs the access token (query, cookie or bearer header); writes need a
// same-origin request carrying the session's CSRF token; a read-only
// console serves no action at all. Every decision and control action goes
// through the same internal/blackboard calls the CLI uses.
package console
