// Package reviewpolicy decides a review phase from its reviews (the
// review policy; docs/design.md). It is pure: no I/O, no clock.
//
// Two steps. [Judge] reads one reviewer's answer — the review payload and,
// when the tool returned one, its agent memory — into a [Verdict]. [Decide]
// then applies a [Policy] to every reviewer's [Review] (its [Role], whether
// it delivered, and its verdict) and returns a [Decision]: proceed, rework
// or fail, which rule decided, and everything it read, for the
// review_decision event and the shared memory's Recent Updates.
//
// # Reading a verdict
//
// Precedence, highest first:
//
//  1. the payload's own "verdict" (approve/approved, reject/rejected) or
//     "status" (DONE, NEEDS_REVISION, ERROR) field; when both are given and
//     disagree, the worse wins (ERROR over NEEDS_REVISION over DONE) and the
//     disagreement is a contract gap; an unreadable value is a rejection
//     and a contract gap;
//  2. the status of the reviewer's agent memory;
//  3. the legacy forms of the tool contract: {} or [] approves, an empty payload
//     does not, and anything else (other JSON, free text) is a rejection
//     whose text is the feedback.
//
// Worst case wins ("conflicts take the worst case"). When the
// payload and the agent memory disagree on the status, the worse of the
// two wins (ERROR over NEEDS_REVISION over DONE) and the disagreement is a
// contract gap. The severity is the payload's "severity", else the agent
// memory's highest_severity ("N/A" and "none" count as no severity); when
// both state one and they differ, the memory's is kept as MemorySeverity
// and counts too. The payload's findings may carry severities of their
// own, which count as well: a review counts as the worst severity it
// states anywhere.
//
// # Deciding
//
// Reviews are read blocking reviewers first, then the other non-advisory
// reviewers, then advisory ones, each group by agent name. Every review is
// read and listed in the Decision; then the first rule that applies
// decides:
//
//  1. required: a required reviewer whose review is missing, whose tool
//     failed, or whose status is ERROR fails the phase;
//     blocking: a blocking reviewer whose severity is at or above FailAt
//     fails the phase (1 is checked review by review, in reading order);
//  2. quorum: fewer usable reviews from non-advisory reviewers than
//     MinReviews fails the phase;
//  3. max_missing: more non-advisory reviews missing, failed or ERROR than
//     MaxMissing (when set) fails the phase;
//  4. rework_at: a usable non-advisory review whose severity is at or above
//     ReworkAt — or a rejection without a severity, or any rejection when
//     ReworkOnReject is set — sends the work back;
//  5. proceed: otherwise the phase passes.
//
// A usable review is a delivered one whose status is not ERROR. Severity
// names compare case-insensitively. A severity that is not in the policy's
// taxonomy counts as the worst and is a contract gap (the memory and review design: "Critical"
// from a reviewer whose taxonomy is Blocker/Major/Minor counts as Blocker
// and is flagged; no alias is invented). A rejection without a severity
// counts as the worst and is a contract gap (unless ReworkOnReject is set:
// then its status alone sends the work back); so does any usable review
// without one when SeverityRequired is set (the memory and review design's "severity field
// missing → worst case").
//
// Advisory reviewers (the memory and review design's knowledge reviewer) never decide: their
// failures are ignored, they never count toward MinReviews or MaxMissing,
// and their severities never cause rework or failure. When the phase
// reworks for another reason, their rejections go back to the author with
// the others (Decision.Rejecting), because the advice is still useful.
//
// the memory and review design's three clusters as policies (see sett.yml.example):
//
//   - critique: Severities [Critical, High, Medium, Low], ReworkAt High,
//     FailAt Critical, MinReviews 2, SeverityRequired;
//   - verification: Severities [FAIL, PASS], ReworkAt FAIL, FailAt FAIL,
//     MaxMissing 1, ReworkOnReject, and the build verifier Required;
//   - release: the default severities, ReworkAt Major, FailAt Blocker,
//     MinReviews 2, SeverityRequired, the security reviewer Required and
//     Blocking, the knowledge reviewer Advisory.
package reviewpolicy
