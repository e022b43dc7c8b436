package vault

import (
	"fmt"
	"strings"
)

// howToDecide is the "How to decide" part of an approval file, down to
// its empty "## Reason" section. id is the artefact's short id; learner
// says whether orchestrator.learner names an agent: then a plan moved to
// Rejected/ alone is enough (the learner works out why from the plan and
// its task), and the text must not ask for a reason it does not need.
func howToDecide(id string, learner bool) string {
	var s strings.Builder
	s.WriteString("\n## How to decide\n\n")
	s.WriteString("- **Approve**: move this file to `Approved/`, or set `approval_status: approved` above.\n")
	if learner {
		s.WriteString("- **Reject**: move this file to `Rejected/`, or set `approval_status: rejected` above. A reason is optional: " +
			"the learner works out what to learn from this file and its task. If you know why, say so in `reason:` above or under `## Reason` below; " +
			"it is the feedback the author gets and what the learner starts from.\n")
	} else {
		s.WriteString("- **Reject**: move this file to `Rejected/`, or set `approval_status: rejected` above, and say why in `reason:` above or under `## Reason` below. The reason is what Sett learns from.\n")
	}
	if learner {
		fmt.Fprintf(&s, "- Or in a terminal: `sett approve %s` / `sett reject %s [--reason \"...\"]`.\n", id, id)
	} else {
		fmt.Fprintf(&s, "- Or in a terminal: `sett approve %s` / `sett reject %s --reason \"...\"`.\n", id, id)
	}
	s.WriteString("\nYour name goes in `decided_by:` (optional). This decision is for exactly this version; if a newer one appears, decide that one.\n")
	s.WriteString("\n## Reason\n\n")
	return s.String()
}
