package vault

import (
	"strings"
	"testing"
)

// The approval file's instructions match the rule the blackboard applies
// (blackboard.RejectionNeedsReason): with a learner, a move to Rejected/
// alone is a complete rejection, so the text must not ask for a reason.
func TestHowToDecideAsksForAReasonOnlyWithoutALearner(t *testing.T) {
	for _, tc := range []struct {
		learner      bool
		want, absent []string
	}{
		{learner: false,
			want:   []string{"and say why in `reason:`", "The reason is what Sett learns from.", "`sett reject ab12 --reason"},
			absent: []string{"A reason is optional"}},
		{learner: true,
			want:   []string{"A reason is optional", "the learner works out", "move this file to `Rejected/`"},
			absent: []string{"and say why", "The reason is what Sett learns from", "needs a reason", "required"}},
	} {
		got := howToDecide("ab12", tc.learner)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("learner=%v: missing %q in\n%s", tc.learner, w, got)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(got, a) {
				t.Errorf("learner=%v: says %q in\n%s", tc.learner, a, got)
			}
		}
		if !strings.HasSuffix(got, "\n## Reason\n\n") {
			t.Errorf("learner=%v: the Reason section must end the text (people write under it):\n%s", tc.learner, got)
		}
	}
}
