package blackboard_test

import (
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

func TestGetLearningsReadsOnlyTheNamedOnes(t *testing.T) {
	bb := redistest.Client(t)
	ctx := t.Context()
	lead, err := bb.AcquireLeadership(ctx, "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, text := range []string{"cite the ticket", "name the owner"} {
		claim := blackboard.NewID()
		l := &blackboard.Learning{ID: blackboard.DeriveID("learning", claim), Text: text, ArtefactType: "Plan",
			WorkflowID: blackboard.NewID(), Source: blackboard.LearningFromReason}
		if _, err := bb.RecordLearning(ctx, l, lead.Epoch); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			ids = append(ids, l.ID)
		}
	}
	ids = append(ids, blackboard.DeriveID("learning", blackboard.NewID())) // none recorded
	got, err := bb.GetLearnings(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Text != "cite the ticket" {
		t.Fatalf("learnings %+v, want only the first", got)
	}
	if got, err := bb.GetLearnings(ctx, nil); err != nil || got != nil {
		t.Fatalf("no ids: %v, %v", got, err)
	}
}
