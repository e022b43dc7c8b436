package reviewpolicy

import (
	"testing"

	"github.com/settdev/sett/internal/memory"
)

// FuzzJudge checks Judge's promises on any payload, with and without a
// memory: it never panics, always gives a valid status, basis and reason,
// and an approval carries no feedback while a rejection of a non-empty
// payload carries it.
func FuzzJudge(f *testing.F) {
	for _, seed := range []string{"{}", "[]", "", "free text", `{"verdict":"approve"}`, `{"verdict":"reject","severity":"Major","findings":[{"severity":"Minor"}]}`,
		`{"status":"ERROR"}`, `{"verdict":1,"status":[],"severity":{},"findings":7}`, `null`, `"x"`} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, payload string, withMemory bool) {
		var mem *memory.AgentMemory
		if withMemory {
			mem = &memory.AgentMemory{Status: memory.StatusNeedsRevision, HighestSeverity: "Major"}
		}
		v := Judge(payload, mem)
		if !v.Status.Valid() || !v.Basis.Valid() || v.Reason == "" {
			t.Fatalf("Judge(%q) = %+v", payload, v)
		}
		if v.Approves() && v.Feedback != "" {
			t.Fatalf("an approval carries feedback: %+v", v)
		}
		d := Decide(DefaultPolicy(), []Review{{Agent: "r", State: StateDelivered, Verdict: v}})
		if !d.Outcome.Valid() || !d.Rule.Valid() || d.Reason == "" {
			t.Fatalf("Decide = %+v", d)
		}
	})
}
