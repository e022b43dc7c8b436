package reviewpolicy

import (
	"testing"

	"github.com/settdev/sett/internal/memory"
)

// TestWorstCaseWins reads whole reviews (payload and agent memory)
// through Judge and Decide: the payload verdict, the payload severity and
// the memory's status and severity combine to the most severe
// ("conflicts take the worst case").
func TestWorstCaseWins(t *testing.T) {
	release := Policy{MinReviews: 1, SeverityRequired: true}
	security := Role{Blocking: true, Required: true}
	mem := func(st memory.Status, sev string) *memory.AgentMemory {
		return &memory.AgentMemory{Status: st, HighestSeverity: sev}
	}
	tests := []struct {
		name        string
		payload     string
		mem         *memory.AgentMemory
		wantOutcome Outcome
		wantRule    Rule
		wantCounted string
	}{
		{name: "memory Blocker with a DONE/Minor payload fails", payload: `{"status":"DONE","severity":"Minor"}`, mem: mem(memory.StatusNeedsRevision, "Blocker"),
			wantOutcome: OutcomeFail, wantRule: RuleBlocking, wantCounted: "Blocker"},
		{name: "memory Blocker with a DONE payload and no severity fails", payload: `{"verdict":"approve"}`, mem: mem(memory.StatusDone, "Blocker"),
			wantOutcome: OutcomeFail, wantRule: RuleBlocking, wantCounted: "Blocker"},
		{name: "memory Major with a Minor payload reworks", payload: `{"status":"DONE","severity":"Minor"}`, mem: mem(memory.StatusDone, "Major"),
			wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantCounted: "Major"},
		{name: "payload Major with a memory Minor reworks", payload: `{"status":"DONE","severity":"Major"}`, mem: mem(memory.StatusDone, "Minor"),
			wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantCounted: "Major"},
		{name: "payload Blocker with a memory DONE/Minor fails", payload: `{"status":"DONE","severity":"Blocker"}`, mem: mem(memory.StatusDone, "Minor"),
			wantOutcome: OutcomeFail, wantRule: RuleBlocking, wantCounted: "Blocker"},
		{name: "memory ERROR makes a required reviewer unusable", payload: `{"status":"DONE","severity":"Minor"}`, mem: mem(memory.StatusError, ""),
			wantOutcome: OutcomeFail, wantRule: RuleRequired, wantCounted: "Minor"},
		{name: "agreeing Minor proceeds", payload: `{"status":"DONE","severity":"Minor"}`, mem: mem(memory.StatusDone, "minor"),
			wantOutcome: OutcomeProceed, wantRule: RuleProceed, wantCounted: "Minor"},
		{name: "a finding's Blocker beats a Minor overall", payload: `{"status":"DONE","severity":"Minor","findings":[{"severity":"Blocker","text":"secret in log"}]}`, mem: mem(memory.StatusDone, "Minor"),
			wantOutcome: OutcomeFail, wantRule: RuleBlocking, wantCounted: "Blocker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(tt.payload, tt.mem)
			d := Decide(release, []Review{{Agent: "r-security", Role: security, State: StateDelivered, Verdict: v}})
			if d.Outcome != tt.wantOutcome || d.Rule != tt.wantRule {
				t.Fatalf("Decide = %s (%s); want %s (%s)\n%s", d.Outcome, d.Rule, tt.wantOutcome, tt.wantRule, d.Line())
			}
			if got := d.ReviewsRead[0].CountedAs; got != tt.wantCounted {
				t.Errorf("counted as %q, want %q\n%s", got, tt.wantCounted, d.Line())
			}
		})
	}
}
