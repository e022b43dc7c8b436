// Package priority scores goals so that urgent work is granted first
// (docs/guide.md, "Priority scores"). It is pure: the caller passes the time.
//
// A score is the sum of three parts, each weight configurable
// (orchestrator.priority in sett.yml):
//
//   - priority: high 10, medium 5, low 0 — or a whole number, used as it
//     is; no priority counts as low (the scheduling rules: missing means low);
//   - deadline: closer than 2 hours +20, than 1 day +10, than 1 week +5.
//     "Closer than" is strict, as in the scheduling rules' code (hours < 2): exactly
//     2 hours away earns the 1-day weight, exactly a week away earns
//     nothing. A deadline already past earns the 2-hour weight: overdue
//     work is the most urgent there is (the scheduling rules' code gives it the same,
//     since a negative number of hours is below 2);
//   - sender: +10 when the sender is one of the important senders.
//
// # Senders
//
// The sender may be a bare address or a display-name form such as
// "CEO <ceo@company.com>"; its address is compared case-insensitively and
// exactly with each important sender. An entry that starts with "@", such
// as "@company.com", matches every address of exactly that domain (not its
// subdomains).
//
// # Deadlines
//
// Accepted forms: RFC 3339 (2026-01-29T09:00:00Z, with an offset or
// fractional seconds, or without seconds), the same with a space instead of
// the T, without a zone (read as UTC), a date alone (2026-01-29: the end of
// that day, UTC, since a date names the day the work is due), Go's own
// time.Time text (2026-01-29 09:00:00 +0000 UTC, what a YAML timestamp
// turns into when printed), and e-mail dates (RFC 5322: Thu, 29 Jan 2026
// 09:00:00 +0000). Anything else is an error that names the value.
package priority
