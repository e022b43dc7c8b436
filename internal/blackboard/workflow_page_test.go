package blackboard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

func TestListWorkflowPageWalksTheIndexWithBoundedScans(t *testing.T) {
	bb := redistest.Client(t)
	ctx := context.Background()
	want := map[string]bool{}
	for i := range 30 {
		text := "routine"
		if i%10 == 3 {
			text = "Rotate KEYS"
		}
		g := blackboard.NewGoal(text, 0, "user", nil)
		if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
			t.Fatal(err)
		}
		if text != "routine" {
			want[g.ID] = true
			// The matching workflows also hold a Plan by the planner.
			p := child(g.ID)
			p.Type, p.ProducedByAgent = "Plan", "planner"
			create(t, bb, p)
		}
	}
	tests := []struct {
		name    string
		q       blackboard.WorkflowQuery
		want    int
		minCall int
	}{
		{"unfiltered pages", blackboard.WorkflowQuery{Limit: 7}, 30, 5},
		{"text filter with a small scan bound", blackboard.WorkflowQuery{Text: "rotate keys", Limit: 2, MaxScan: 4}, 3, 3},
		{"status filter", blackboard.WorkflowQuery{Status: blackboard.WorkflowRunning, Limit: 50}, 30, 1},
		{"status no match", blackboard.WorkflowQuery{Status: blackboard.WorkflowFailed}, 0, 1},
		{"agent filter", blackboard.WorkflowQuery{Agent: "planner", Limit: 2}, 3, 2},
		{"type filter", blackboard.WorkflowQuery{Type: "Plan", Limit: 50}, 3, 1},
		{"type and agent", blackboard.WorkflowQuery{Type: "Plan", Agent: "planner", Text: "rotate"}, 3, 1},
		{"type no match", blackboard.WorkflowQuery{Type: "CodeCommit"}, 0, 1},
		{"agent no match", blackboard.WorkflowQuery{Agent: "reviewer"}, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen, calls := map[string]bool{}, 0
			q := tc.q
			for {
				p, err := bb.ListWorkflowPage(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				calls++
				for _, w := range p.Workflows {
					if seen[w.ID] {
						t.Fatalf("workflow %s returned twice", w.ID)
					}
					seen[w.ID] = true
					if (q.Text != "" || q.Agent != "" || q.Type != "") && !want[w.ID] {
						t.Errorf("workflow %s (%q) does not match %q", w.ID, w.Goal, q.Text)
					}
				}
				if p.Next == "" {
					break
				}
				q.Cursor = p.Next
			}
			if len(seen) != tc.want || calls < tc.minCall {
				t.Errorf("%d workflows in %d calls, want %d in at least %d", len(seen), calls, tc.want, tc.minCall)
			}
		})
	}
	if _, err := bb.ListWorkflowPage(ctx, blackboard.WorkflowQuery{Cursor: "x"}); !errors.Is(err, blackboard.ErrInvalid) {
		t.Errorf("bad cursor: %v, want ErrInvalid", err)
	}
	if _, err := bb.ListWorkflowPage(ctx, blackboard.WorkflowQuery{Status: "done"}); !errors.Is(err, blackboard.ErrInvalid) {
		t.Errorf("bad status: %v, want ErrInvalid", err)
	}
}
