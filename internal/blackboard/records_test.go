package blackboard_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/settdev/sett/internal/blackboard"
)

func TestNewGoal(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 199) + "éé" + strings.Repeat("b", 50) // "é" straddles byte 200
	cases := []struct {
		name     string
		text     string
		priority int
		meta     map[string]string
		summary  string
		wantMeta map[string]string
	}{
		{"one line", "build a calculator", 3, nil, "build a calculator", map[string]string{}},
		{"first line only", "  build it\nwith tests\n", 0, map[string]string{"vault": "inbox/x.md"},
			"build it", map[string]string{"vault": "inbox/x.md"}},
		{"long ascii", strings.Repeat("x", 300), -2, nil, strings.Repeat("x", 200) + "…", map[string]string{}},
		{"cut inside a rune", long, 1, nil, strings.Repeat("a", 199) + "…", map[string]string{}},
		{"metadata keeps the person's words", "g", 9, map[string]string{"priority": "high"}, "g", map[string]string{"priority": "high"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var metaBefore map[string]string
			if tc.meta != nil {
				metaBefore = map[string]string{}
				for k, v := range tc.meta {
					metaBefore[k] = v
				}
			}
			g := blackboard.NewGoal(tc.text, tc.priority, "user", tc.meta)
			if !g.IsGoal() || g.LogicalID != g.ID || g.Version != 1 || g.Type != blackboard.GoalType ||
				g.StructuralType != blackboard.StructuralStandard || g.Payload != tc.text || g.ProducedByRole != "user" {
				t.Errorf("goal = %+v", g)
			}
			if g.Summary != tc.summary || !utf8.ValidString(g.Summary) {
				t.Errorf("summary = %q, want %q (valid UTF-8)", g.Summary, tc.summary)
			}
			if !reflect.DeepEqual(g.Metadata, tc.wantMeta) || g.Priority != tc.priority {
				t.Errorf("metadata = %v, priority %d; want %v, %d", g.Metadata, g.Priority, tc.wantMeta, tc.priority)
			}
			if !reflect.DeepEqual(tc.meta, metaBefore) {
				t.Errorf("NewGoal changed the caller's metadata: %v", tc.meta)
			}
			if err := blackboard.ValidateArtefact(g, 1<<20); err != nil {
				t.Errorf("NewGoal built an invalid artefact: %v", err)
			}
		})
	}
	if a, b := blackboard.NewGoal("x", 0, "user", nil), blackboard.NewGoal("x", 0, "user", nil); a.ID == b.ID {
		t.Error("two goals share an id")
	}
}
