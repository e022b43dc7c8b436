package blackboard_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

// TestKeys checks every key and channel against the readable pattern of
// the documented key patterns, with and without the cluster hash tag. A new Keys method
// without a row here fails the test.
func TestKeys(t *testing.T) {
	t.Parallel()
	const instance = "demo-1"
	// Placeholders in args and want are replaced by these values.
	values := map[string]string{
		"<id>":    "0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b",
		"<claim>": "1c5f8d2b-3a4e-4f60-9b0c-1d2e3f4a5b6c",
		"<wf>":    "2d6a9e3c-4b5f-4071-8c1d-2e3f4a5b6c7d",
		"<agent>": "code_reviewer-2",
	}
	cases := []struct {
		name string // the Keys method
		args []string
		want string
	}{
		{"Artefact", []string{"<id>"}, "sett:<i>:artefact:<id>"},
		{"Thread", []string{"<id>"}, "sett:<i>:thread:<id>"},
		{"Claim", []string{"<claim>"}, "sett:<i>:claim:<claim>"},
		{"Bids", []string{"<claim>"}, "sett:<i>:claim:<claim>:bids"},
		{"Grants", []string{"<claim>"}, "sett:<i>:claim:<claim>:grants"},
		{"Outputs", []string{"<claim>"}, "sett:<i>:claim:<claim>:outputs"},
		{"ClaimByArtefact", []string{"<id>"}, "sett:<i>:claim_by_artefact:<id>"},
		{"Workflow", []string{"<wf>"}, "sett:<i>:workflow:<wf>"},
		{"ArtefactIndex", nil, "sett:<i>:index:artefacts"},
		{"WorkflowArtefactIndex", []string{"<wf>"}, "sett:<i>:index:workflow:<wf>"},
		{"WorkflowClaimIndex", []string{"<wf>"}, "sett:<i>:index:workflow:<wf>:claims"},
		{"WorkflowIndex", nil, "sett:<i>:index:workflows"},
		{"AgentTokens", nil, "sett:<i>:tokens:agents"},
		{"WorkflowMemories", []string{"<wf>"}, "sett:<i>:workflow:<wf>:memories"},
		{"SharedMemory", []string{"<wf>"}, "sett:<i>:workflow:<wf>:shared_memory"},
		{"ArtefactIDIndex", nil, "sett:<i>:index:artefact_ids"},
		{"ClaimIDIndex", nil, "sett:<i>:index:claim_ids"},
		{"ActiveClaims", nil, "sett:<i>:index:claims:active"},
		{"ApprovalIndex", nil, "sett:<i>:index:approvals"},
		{"Learnings", nil, "sett:<i>:learnings"},
		{"LearningIndex", nil, "sett:<i>:index:learnings"},
		{"ToolMemory", nil, "sett:<i>:tool_memory"},
		{"Running", nil, "sett:<i>:scheduler:running"},
		{"Waiting", nil, "sett:<i>:scheduler:waiting"},
		{"Capacity", nil, "sett:<i>:scheduler:capacity"},
		{"Control", nil, "sett:<i>:control"},
		{"VaultHealth", nil, "sett:<i>:vault:health"},
		{"AgentRunning", []string{"<agent>"}, "sett:<i>:agent:<agent>:running"},
		{"AgentWaiting", []string{"<agent>"}, "sett:<i>:agent:<agent>:waiting"},
		{"AgentReplicas", []string{"<agent>"}, "sett:<i>:agent:<agent>:replicas"},
		{"Events", nil, "sett:<i>:events"},
		{"Inbox", []string{"<agent>"}, "sett:<i>:agent:<agent>:inbox"},
		{"AgentGrants", []string{"<agent>"}, "sett:<i>:agent:<agent>:grants"},
		{"OrchestratorQueue", nil, "sett:<i>:orchestrator:queue"},
		{"DeadLetters", nil, "sett:<i>:orchestrator:dead_letters"},
		{"Failures", []string{"<id>"}, "sett:<i>:claim:<id>:failures"},
		{"Timers", nil, "sett:<i>:timers"},
		{"Agents", nil, "sett:<i>:agents"},
		{"Heartbeat", []string{"<agent>"}, "sett:<i>:agent:<agent>:heartbeat"},
		{"Lease", []string{"<claim>", "<agent>"}, "sett:<i>:lease:<claim>:<agent>"},
		{"HandBack", []string{"<claim>", "<agent>"}, "sett:<i>:lease:<claim>:handback:<agent>"},
		{"Leader", nil, "sett:<i>:orchestrator:leader"},
		{"Epoch", nil, "sett:<i>:orchestrator:epoch"},
		{"ArtefactEvents", nil, "sett:<i>:artefact_events"},
		{"ClaimEvents", nil, "sett:<i>:claim_events"},
		{"WorkflowEvents", nil, "sett:<i>:workflow_events"},
		{"AgentEvents", []string{"<agent>"}, "sett:<i>:agent:<agent>:events"},
	}

	// Every exported method but Prefix must have a row.
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.name] = true
	}
	typ := reflect.TypeFor[blackboard.Keys]()
	for m := range typ.Methods() {
		if m.Name != "Prefix" && !covered[m.Name] {
			t.Errorf("Keys.%s has no row in TestKeys: add its readable pattern", m.Name)
		}
	}

	for _, hashTag := range []bool{false, true} {
		prefix := "sett:" + instance + ":"
		if hashTag {
			prefix = "sett:{" + instance + "}:"
		}
		k := blackboard.NewKeys(instance, hashTag)
		if got := k.Prefix(); got != prefix {
			t.Errorf("hashTag=%v: Prefix() = %q, want %q", hashTag, got, prefix)
		}
		seen := map[string]string{}
		for _, tc := range cases {
			m := reflect.ValueOf(k).MethodByName(tc.name)
			if !m.IsValid() {
				t.Errorf("row %s: Keys has no such method", tc.name)
				continue
			}
			if m.Type().NumIn() != len(tc.args) {
				t.Errorf("row %s: method takes %d arguments, the row gives %d", tc.name, m.Type().NumIn(), len(tc.args))
				continue
			}
			in := make([]reflect.Value, len(tc.args))
			for i, a := range tc.args {
				in[i] = reflect.ValueOf(values[a])
			}
			got := m.Call(in)[0].String()
			want := strings.Replace(tc.want, "sett:<i>:", prefix, 1)
			for ph, v := range values {
				want = strings.ReplaceAll(want, ph, v)
			}
			if got != want {
				t.Errorf("hashTag=%v: %s(%v) = %q, want %q", hashTag, tc.name, tc.args, got, want)
			}
			// No two helpers may ever spell the same key.
			if other, dup := seen[got]; dup {
				t.Errorf("hashTag=%v: %s and %s both build %q", hashTag, tc.name, other, got)
			}
			seen[got] = tc.name
			// With the hash tag every key of the instance hashes on the
			// same {instance} tag: exactly one '{' and it is the prefix's.
			if hashTag && (strings.Count(got, "{") != 1 || !strings.HasPrefix(got, prefix)) {
				t.Errorf("%s = %q: not in the instance's cluster slot", tc.name, got)
			}
		}
	}
}
