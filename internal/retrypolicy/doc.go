// Package retrypolicy decides whether a failed tool run is tried again,
// and when (the scheduling rules' retries). It is pure: the caller passes the
// attempt number and, for jitter, a random source.
//
// # Attempts and delays
//
// MaxAttempts counts every run, the first included (default 5;
// issue 11: "max_attempts: 3 → three attempts"). The scheduling rules instead retry 5
// times after the first run, one delay per retry; Sett counts them as retries, so
// with the defaults the fifth delay (4h) is only reached with
// max_attempts of 6 or more. Reviewers are retried once: unless
// an agent sets retry.max_attempts itself, a review grant gets
// ReviewerMaxAttempts (see Policy.ForReview).
//
// After attempt n fails, the next one starts Backoff[n-1] later (the last
// delay repeats when attempts outnumber the list), moved by up to ±10 %
// of jitter so that many failures do not retry in lockstep. Schedule
// offers the same delays as a cenkalti/backoff BackOff, the project's one
// backoff abstraction.
//
// # Transient or permanent
//
// Classify reads the facts of a failure, first match wins:
//
//  1. the tool answered "retryable": false → permanent;
//  2. the exit code is in PermanentExitCodes → permanent (an explicit
//     statement by the operator; it wins over the tool's retryable: true,
//     because failing fast is the safe side of a contradiction);
//  3. the tool answered "retryable": true → transient;
//  4. by kind: exit_nonzero with exit code 126 or 127 (a shell that
//     could not run a command: not executable, not found) → permanent;
//     unreadable_output (stdout is not one JSON object: prose, nothing,
//     several values) → permanent, because a tool that answers so is
//     broken, and failing on the first run tells its author at once;
//     exit_nonzero otherwise, signaled (a crash, an OOM kill), timeout,
//     lost_lease, tool_error (the tool reported an error without saying
//     whether it is retryable) → transient, as listed for retries;
//     invalid_output and stdout_too_large → transient, because a tool is
//     usually a model whose next answer differs, the retries are bounded,
//     and every attempt's Failure names the field at fault, so a
//     deterministic bug is still visible at once (set max_attempts: 1 for
//     a tool known to be deterministic); start_failed → permanent, because
//     a program that cannot be started (not found, not executable, bad
//     working directory) is a configuration error that no delay fixes, and
//     failing at once tells the operator hours sooner; canceled →
//     permanent, because someone (sett cancel, a shutdown) meant it;
//     an unknown kind → transient (bounded by MaxAttempts).
package retrypolicy
