package fakellm

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func post(t *testing.T, url, key, body string, anthropic bool) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		if anthropic {
			req.Header.Set("X-Api-Key", key)
		} else {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("answer is not JSON: %s", b)
	}
	return resp.StatusCode, resp.Header, doc
}

func chat(system, user string) string {
	b, _ := json.Marshal(map[string]any{"model": "m1", "messages": []map[string]any{
		{"role": "system", "content": system}, {"role": "user", "content": user}},
		"response_format": map[string]any{"type": "json_object"}})
	return string(b)
}

func openAIText(t *testing.T, doc map[string]any) string {
	t.Helper()
	choices, _ := doc["choices"].([]any)
	if len(choices) != 1 {
		t.Fatalf("choices = %v", doc)
	}
	return choices[0].(map[string]any)["message"].(map[string]any)["content"].(string)
}

func TestSequencesFaultsAndRecords(t *testing.T) {
	s := New(Script{
		Rules: []Rule{
			{Name: "rev", Match: []string{"reviewer", "Plan"}, Answers: []string{"reject", "approve"}},
			{Name: "any", Answers: []string{"other"}},
		},
		Faults: []Fault{{Match: []string{"flaky"}, Status: 429, RetryAfter: "3", Times: 2}},
	})
	var journal bytes.Buffer
	s.SetJournal(&journal)
	srv := httptest.NewServer(s)
	defer srv.Close()
	url := srv.URL + "/v1/chat/completions"

	var got []string
	for range 3 {
		code, _, doc := post(t, url, "k", chat("You are a reviewer", "## Work to review: Plan"), false)
		if code != 200 {
			t.Fatalf("status %d: %v", code, doc)
		}
		got = append(got, openAIText(t, doc))
	}
	if strings.Join(got, ",") != "reject,approve,approve" {
		t.Errorf("sequence = %v, want reject, approve, then the last repeating", got)
	}
	for i := range 3 {
		code, h, doc := post(t, url, "", chat("", "flaky"), false)
		if i < 2 {
			if code != 429 || h.Get("Retry-After") != "3" {
				t.Fatalf("request %d: %d %v", i, code, h)
			}
			if e := doc["error"].(map[string]any); e["code"] != "rate_limit_exceeded" {
				t.Errorf("error = %v", e)
			}
			continue
		}
		if code != 200 || openAIText(t, doc) != "other" {
			t.Fatalf("after the faults: %d %v", code, doc)
		}
	}

	recs := s.Requests()
	if len(recs) != 6 {
		t.Fatalf("%d records", len(recs))
	}
	r0 := recs[0]
	if r0.Seq != 1 || r0.API != "openai" || r0.Model != "m1" || r0.System != "You are a reviewer" || r0.User != "## Work to review: Plan" ||
		r0.ResponseFormat != "json_object" || !r0.HasKey || r0.Rule != "rev" || r0.Status != 200 || r0.Answer != "reject" || r0.Fault != -1 {
		t.Errorf("record = %+v", r0)
	}
	if recs[3].Fault != 0 || recs[3].Status != 429 || recs[3].HasKey {
		t.Errorf("fault record = %+v", recs[3])
	}
	if lines := strings.Split(strings.TrimSpace(journal.String()), "\n"); len(lines) != 6 {
		t.Errorf("journal has %d lines", len(lines))
	}
	if strings.Contains(journal.String(), `"k"`) {
		t.Error("the key was recorded")
	}

	// GET /requests serves the same records; DELETE resets the sequences.
	resp, err := http.Get(srv.URL + "/requests")
	if err != nil {
		t.Fatal(err)
	}
	var served []Record
	if err := json.NewDecoder(resp.Body).Decode(&served); err != nil || len(served) != 6 {
		t.Fatalf("GET /requests: %d records, %v", len(served), err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/requests", nil)
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE /requests: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, _, doc := post(t, url, "", chat("You are a reviewer", "## Work to review: Plan"), false); openAIText(t, doc) != "reject" {
		t.Errorf("after a reset the sequence starts again: %v", doc)
	}
}

func TestAnthropicAndKeys(t *testing.T) {
	s := New(Script{APIKey: "sk-ant-test-123", Model: "claude-fake", Rules: []Rule{{Name: "all", Answers: []string{"hi"}}}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	body := `{"model":"claude-x","max_tokens":100,"system":[{"type":"text","text":"sys"}],"messages":[{"role":"user","content":[{"type":"text","text":"hello there"}]}]}`
	code, _, doc := post(t, srv.URL+"/v1/messages", "wrong", body, true)
	if code != 401 || doc["error"].(map[string]any)["type"] != "authentication_error" {
		t.Fatalf("wrong key: %d %v", code, doc)
	}
	code, _, doc = post(t, srv.URL+"/v1/messages", "sk-ant-test-123", body, true)
	if code != 200 || doc["model"] != "claude-fake" || doc["stop_reason"] != "end_turn" {
		t.Fatalf("answer: %d %v", code, doc)
	}
	if text := doc["content"].([]any)[0].(map[string]any)["text"]; text != "hi" {
		t.Errorf("text = %v", text)
	}
	u := doc["usage"].(map[string]any)
	if u["input_tokens"].(float64) != float64(tokens("sys\nhello there")) || u["output_tokens"].(float64) != 1 {
		t.Errorf("usage = %v", u)
	}
	rec := s.Requests()[1]
	if rec.API != "anthropic" || rec.System != "sys" || rec.User != "hello there" || rec.MaxTokens != 100 || !rec.HasKey {
		t.Errorf("record = %+v", rec)
	}
	if code, _, _ := post(t, srv.URL+"/v1/messages", "sk-ant-test-123", `{"model":"x","messages":[]}`, true); code != 400 {
		t.Errorf("a request without max_tokens is refused like the real API, got %d", code)
	}
}

func TestNoRuleAndValidation(t *testing.T) {
	srv := httptest.NewServer(New(Script{Rules: []Rule{{Name: "only", Match: []string{"zebra"}, Answers: []string{"x"}}}}))
	defer srv.Close()
	code, _, doc := post(t, srv.URL+"/v1/chat/completions", "", chat("a", "b"), false)
	if msg := doc["error"].(map[string]any)["message"].(string); code != 400 || !strings.Contains(msg, `no rule matches this prompt; the rules are only ["zebra"]`) {
		t.Errorf("no rule: %d %v", code, doc)
	}
	if _, err := ParseScript([]byte(`{"rules":[{"name":"x","answers":[]}]}`)); err == nil || !strings.Contains(err.Error(), "has no answers") {
		t.Errorf("err = %v", err)
	}
	if _, err := ParseScript([]byte(`{"rulez":[]}`)); err == nil || !strings.Contains(err.Error(), "rulez") {
		t.Errorf("err = %v", err)
	}
	if _, err := ParseFaults(`[{"status":200}]`); err == nil || !strings.Contains(err.Error(), "status 200") {
		t.Errorf("err = %v", err)
	}
	if fs, err := ParseFaults(`[{"status":500,"times":1}]`); err != nil || len(fs) != 1 {
		t.Errorf("faults = %v, %v", fs, err)
	}
	if err := DemoScript().Validate(); err != nil {
		t.Error(err)
	}
}
