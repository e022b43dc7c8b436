package orchestrator

import (
	"context"
	"testing"
	"time"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// TestClaimsCarryAFinishPlan: the claim the creator makes lets its
// exclusive agent's result complete it in the result's own script, and
// the orchestrator counts that completion from its queue entry as it
// counts its own; --disable-result-completion leaves it to the orchestrator.
func TestClaimsCarryAFinishPlan(t *testing.T) {
	t.Parallel()
	for _, off := range []bool{false, true} {
		name := "in the result"
		if off {
			name = "--disable-result-completion"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, Config{Creator: CreatorConfig{NoResultCompletion: off},
				Agents: map[string]string{"coder": "coder"},
				Claims: ClaimConfig{BidTimeout: time.Hour, LeaseTTL: 10 * time.Second,
					// The coder's configured rules: the orchestrator records
					// the exclusive bid they decide and grants it at creation.
					Rules: map[string]bidding.Rules{"coder": {Role: "coder", Strategy: blackboard.BidExclusive}}}})
			raw := redistest.Raw(t)
			if err := raw.Set(ctx, f.bb.Keys().Epoch(), "1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			_, claimID := f.goal()
			cl := f.claim(claimID)
			if cl.Status != blackboard.ClaimPendingExclusive || cl.GrantedExclusiveAgent != "coder" {
				t.Fatalf("claim %s granted to %q at creation, want pending_exclusive to coder (its rule-decided bid)", cl.Status, cl.GrantedExclusiveAgent)
			}
			id := blackboard.NewID()
			res := &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: blackboard.StructuralTerminal,
				Type: "Work", Payload: "done", SourceArtefacts: []string{cl.ArtefactID}, ProducedByRole: "coder",
				ProducedByAgent: "coder", WorkflowID: cl.WorkflowID, ClaimID: claimID, Depth: 1}
			if err := f.bb.CreateArtefact(ctx, res, blackboard.WriteAuth{GrantToken: "1"}); err != nil {
				t.Fatal(err)
			}
			if off {
				if got := f.claim(claimID).Status; got != blackboard.ClaimPendingExclusive {
					t.Fatalf("status %s with --disable-result-completion before the orchestrator acted, want pending_exclusive", got)
				}
				f.advance(claimID)
				if got := f.claim(claimID).Status; got != blackboard.ClaimComplete {
					t.Fatalf("status %s after the orchestrator advanced, want complete", got)
				}
				return
			}
			if got := f.claim(claimID).Status; got != blackboard.ClaimComplete {
				t.Fatalf("status %s after the result, want complete", got)
			}
			msgs, err := raw.XRange(ctx, f.bb.Keys().OrchestratorQueue(), "-", "+").Result()
			if err != nil {
				t.Fatal(err)
			}
			var n int
			for _, m := range msgs {
				if m.Values["event"] != string(blackboard.EventClaimCompletedByResult) {
					continue
				}
				n++
				ev := blackboard.Event{Type: blackboard.EventClaimCompletedByResult, ClaimID: claimID, WorkflowID: cl.WorkflowID,
					Fields: map[string]string{}}
				for k, v := range m.Values {
					ev.Fields[k], _ = v.(string)
				}
				f.advancer.CompletedByResult(ev)
			}
			m := f.advancer.m
			if n != 1 || m.ClaimsFinished.WithLabelValues("complete").Value() != 1 ||
				m.WorkflowsEnded.WithLabelValues("completed").Value() != 1 ||
				m.PhaseLatency.WithLabelValues("exclusive").Count() != 1 {
				t.Fatalf("%d completion entries; counted claims complete %v, workflows completed %v, exclusive phases %d; want 1 of each",
					n, m.ClaimsFinished.WithLabelValues("complete").Value(), m.WorkflowsEnded.WithLabelValues("completed").Value(),
					m.PhaseLatency.WithLabelValues("exclusive").Count())
			}
		})
	}
}
