package orchestrator

import "testing"

func TestJudgeReview(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		payload  string
		approve  bool
		severity string
	}{
		{"empty object approves", "{}", true, ""},
		{"empty array approves", " [] \n", true, ""},
		{"verdict approve", `{"verdict":"approve"}`, true, ""},
		{"verdict approve any case", `{"verdict":"Approved","severity":"Minor"}`, true, "Minor"},
		{"verdict reject", `{"verdict":"reject","severity":"Major","findings":["no tests"]}`, false, "Major"},
		{"structured without verdict rejects", `{"findings":["x"]}`, false, ""},
		{"unknown verdict rejects", `{"verdict":"maybe"}`, false, ""},
		{"free text rejects", "needs tests", false, ""},
		{"empty payload rejects", "   ", false, ""},
		{"non-empty array rejects", `["fix line 3"]`, false, ""},
		{"JSON string rejects", `"ok"`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := JudgeReview(tc.payload)
			if v.Approve != tc.approve || v.Severity != tc.severity || v.Reason == "" {
				t.Fatalf("JudgeReview(%q) = %+v, want approve=%v severity=%q and a reason", tc.payload, v, tc.approve, tc.severity)
			}
		})
	}
}
