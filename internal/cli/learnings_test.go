package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/learningsfile"
)

// TestLearningsIncludesHandWritten: what a person wrote into
// Agent_Memory.md (published as the tools' memory) is listed with the
// recorded learnings.
func TestLearningsIncludesHandWritten(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	file := learningsfile.Template + "- Always run the linter before a commit.\n"
	if err := e.bb.PublishToolMemory(t.Context(), file, ""); err != nil {
		t.Fatal(err)
	}
	out := e.mustRun(t, "learnings")
	if !strings.Contains(out, "Written by hand in Agent_Memory.md:\n- Always run the linter before a commit.") {
		t.Errorf("learnings lacks the hand-written one:\n%s", out)
	}
	var ls []blackboard.Learning
	if err := json.Unmarshal([]byte(e.mustRun(t, "learnings", "-o", "json")), &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].Source != "hand_written" || ls[0].Text != "Always run the linter before a commit." {
		t.Errorf("learnings -o json = %+v, want the hand-written learning", ls)
	}
}
