// Package coder is the coding-agent wrapper (sett-coder): it runs a
// headless coding CLI — Claude Code by default, `claude -p
// --output-format json` — on the workflow's own branch and answers a
// CodeCommit with the hash of the one commit that holds what the CLI
// changed.
//
// The user's checkout is never touched. The branch (sett/<first 8
// characters of the workflow id>, created from the workspace's HEAD or
// reused) is checked out in a Git worktree under the repository's own
// .git directory (<git-common-dir>/sett-worktrees/<short id>), the CLI runs
// there, and whatever it changed — committed by itself or left in the
// tree — becomes exactly one commit made by the wrapper, with the claim in
// a trailer (Sett-Claim) so that a re-run of the same claim answers the
// same commit instead of running the CLI again. The worktree is removed
// afterwards; the branch stays. A flock on <short id>.lock keeps two runs
// of one workflow apart.
package coder
