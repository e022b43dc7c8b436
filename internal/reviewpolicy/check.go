package reviewpolicy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/settdev/sett/internal/memory"
)

// CheckStructured checks a review payload that uses the structured form
// (a JSON object with verdict, status, severity or findings) and returns
// an error naming the first field that a reviewer got wrong; the cub turns
// it into a Failure, so a reviewer's broken contract is retried and
// reported instead of silently read as a rejection. Payloads in the
// legacy forms ({}, [], free text, other JSON) are not structured and
// pass. A severity outside the policy's taxonomy is not an error here:
// the policy counts it as the worst and flags it.
func CheckStructured(payload string) error {
	var doc map[string]json.RawMessage
	if json.Unmarshal([]byte(strings.TrimSpace(payload)), &doc) != nil || doc == nil {
		return nil
	}
	if raw, ok := doc["verdict"]; ok && !isNull(raw) {
		s, isStr := jsonString(raw)
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "approve", "approved", "reject", "rejected":
		default:
			if !isStr {
				return fmt.Errorf("review verdict: field verdict is %s; it must be the string \"approve\" or \"reject\"", short(raw))
			}
			return fmt.Errorf("review verdict: field verdict is %q; it must be \"approve\" or \"reject\"", s)
		}
	}
	if raw, ok := doc["status"]; ok && !isNull(raw) {
		s, isStr := jsonString(raw)
		word, _, _ := strings.Cut(s, ":")
		if !isStr || !memory.Status(strings.ToUpper(strings.TrimSpace(word))).Valid() {
			return fmt.Errorf("review verdict: field status is %s; it must be DONE, NEEDS_REVISION or ERROR (optionally followed by \": summary\")", short(raw))
		}
	}
	if raw, ok := doc["severity"]; ok && !isNull(raw) {
		if _, isStr := jsonString(raw); !isStr {
			return fmt.Errorf("review verdict: field severity is %s; it must be a string such as \"Major\"", short(raw))
		}
	}
	if raw, ok := doc["findings"]; ok && !isNull(raw) {
		if _, isStr := jsonString(raw); isStr {
			return nil
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return fmt.Errorf("review verdict: field findings is %s; it must be a list of strings or of objects with a text", short(raw))
		}
		for i, item := range items {
			if _, isStr := jsonString(item); isStr {
				continue
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(item, &obj) != nil {
				return fmt.Errorf("review verdict: findings[%d] is %s; it must be a string or an object with a text", i, short(item))
			}
		}
	}
	return nil
}
