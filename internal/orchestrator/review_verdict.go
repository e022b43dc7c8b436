package orchestrator

import (
	"encoding/json"
	"strings"
)

// Verdict is what the orchestrator reads from one Review artefact.
type Verdict struct {
	Approve  bool
	Severity string
	// Reason is a short human explanation for logs and events.
	Reason string
}

// JudgeReview reads a review payload (SPEC §7): `{}` or `[]` approves; a
// JSON object whose "verdict" is "approve" approves; a JSON object with
// "verdict": "reject" rejects with its severity; anything else — other
// JSON, free text, an empty payload — is a rejection whose text is the
// feedback.
func JudgeReview(payload string) Verdict {
	p := strings.TrimSpace(payload)
	switch p {
	case "{}", "[]":
		return Verdict{Approve: true, Reason: "empty review (approval)"}
	case "":
		return Verdict{Reason: "empty payload is not an approval"}
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(p), &doc); err != nil {
		return Verdict{Reason: "free-text review"}
	}
	var verdict, severity string
	_ = json.Unmarshal(doc["verdict"], &verdict)
	_ = json.Unmarshal(doc["severity"], &severity)
	switch strings.ToLower(strings.TrimSpace(verdict)) {
	case "approve", "approved":
		return Verdict{Approve: true, Severity: severity, Reason: "verdict approve"}
	case "reject", "rejected":
		return Verdict{Severity: severity, Reason: "verdict reject"}
	case "":
		if len(doc) == 0 {
			return Verdict{Approve: true, Reason: "empty review (approval)"}
		}
		return Verdict{Severity: severity, Reason: "structured review without a verdict"}
	}
	return Verdict{Severity: severity, Reason: "unknown verdict " + verdict}
}
