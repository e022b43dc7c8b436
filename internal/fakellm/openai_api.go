package fakellm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// openAIAPI is the OpenAI Chat Completions wire format.
type openAIAPI struct{}

func (openAIAPI) name() string { return "openai" }

func (openAIAPI) parse(body []byte, rec *Record) error {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		ResponseFormat *struct {
			Type string `json:"type"`
		} `json:"response_format"`
		MaxCompletionTokens int64 `json:"max_completion_tokens"`
		MaxTokens           int64 `json:"max_tokens"`
		Stream              bool  `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("the body is not a chat completion request: %v", err)
	}
	if req.Stream {
		return errors.New("streaming is not supported; send stream: false")
	}
	rec.Model = req.Model
	if req.ResponseFormat != nil {
		rec.ResponseFormat = req.ResponseFormat.Type
	}
	rec.MaxTokens = max(req.MaxCompletionTokens, req.MaxTokens)
	var system, user []string
	for _, m := range req.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return fmt.Errorf("message of role %q: %v", m.Role, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		default:
			user = append(user, text)
		}
	}
	if len(user) == 0 {
		return errors.New("the request has no user message")
	}
	rec.System, rec.User = strings.Join(system, "\n\n"), strings.Join(user, "\n\n")
	return nil
}

// contentText reads a message content: a string, or a list of parts of
// which the text parts count.
func contentText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content is neither a string nor a list of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

func (openAIAPI) hasKey(r *http.Request, key string) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	tok = strings.TrimSpace(tok)
	if key == "" {
		return ok && tok != ""
	}
	return ok && tok == key
}

func (openAIAPI) answer(w http.ResponseWriter, rec Record, in, out int64) {
	writeJSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("chatcmpl-fake-%d", rec.Seq), "object": "chat.completion", "created": 0, "model": rec.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": rec.Answer, "refusal": nil}}},
		"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
	})
}

func (openAIAPI) fail(w http.ResponseWriter, status int, message string) {
	typ, code := "invalid_request_error", "invalid_request"
	switch {
	case status == http.StatusUnauthorized:
		typ, code = "invalid_request_error", "invalid_api_key"
	case status == http.StatusTooManyRequests:
		typ, code = "rate_limit_error", "rate_limit_exceeded"
	case status >= 500:
		typ, code = "server_error", "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": typ, "code": code, "param": nil}})
}
