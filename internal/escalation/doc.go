// Package escalation runs the optional escalation.command hook (a
// notification for a human): when a workflow is
// escalated, the operator's command receives the event as JSON on stdin,
// for instance to send a mail or a chat message.
//
// A Runner never blocks its caller: Notify starts the hook in the
// background and returns at once. At most Hook.MaxConcurrent hooks run at a
// time; when that many are running, the new run is dropped with a logged
// warning rather than queued, so a slow or hanging hook cannot pile up
// processes or memory. Each run is bounded by Hook.Timeout, after which the
// hook and its whole process group are killed (the cub's tool runner does
// the running). What happens — success, a non-zero exit, a missing
// command, a timeout — is logged with the hook's stdout and stderr,
// truncated; nothing is returned to the caller, whose work must not depend
// on a notification.
package escalation
