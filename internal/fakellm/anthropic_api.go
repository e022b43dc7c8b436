package fakellm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// anthropicAPI is the Anthropic Messages wire format.
type anthropicAPI struct{}

func (anthropicAPI) name() string { return "anthropic" }

func (anthropicAPI) parse(body []byte, rec *Record) error {
	var req struct {
		Model     string          `json:"model"`
		MaxTokens int64           `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("the body is not a messages request: %v", err)
	}
	if req.Stream {
		return errors.New("streaming is not supported; send stream: false")
	}
	if req.MaxTokens <= 0 {
		return errors.New("max_tokens: field required")
	}
	rec.Model, rec.MaxTokens = req.Model, req.MaxTokens
	if len(req.System) > 0 {
		s, err := contentText(req.System)
		if err != nil {
			return fmt.Errorf("system: %v", err)
		}
		rec.System = s
	}
	var user []string
	for _, m := range req.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return fmt.Errorf("message of role %q: %v", m.Role, err)
		}
		user = append(user, text)
	}
	if len(user) == 0 {
		return errors.New("messages: at least one message is required")
	}
	rec.User = strings.Join(user, "\n\n")
	return nil
}

func (anthropicAPI) hasKey(r *http.Request, key string) bool {
	got := strings.TrimSpace(r.Header.Get("X-Api-Key"))
	if got == "" {
		got, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got = strings.TrimSpace(got)
	}
	if key == "" {
		return got != ""
	}
	return got == key
}

func (anthropicAPI) answer(w http.ResponseWriter, rec Record, in, out int64) {
	writeJSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", rec.Seq), "type": "message", "role": "assistant", "model": rec.Model,
		"content":     []map[string]any{{"type": "text", "text": rec.Answer}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": out,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	})
}

func (anthropicAPI) fail(w http.ResponseWriter, status int, message string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusForbidden:
		typ = "permission_error"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == 529:
		typ = "overloaded_error"
	case status >= 500:
		typ = "api_error"
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}})
}
