package fakellm

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Script is what a Server answers. The zero value answers nothing: every
// request gets a 400 naming the rules it lacks.
type Script struct {
	// Rules are tried in order; the first whose Match all appear in the
	// prompt answers.
	Rules []Rule `json:"rules"`
	// Faults are injected before any rule is tried: the first fault that
	// matches and has requests left answers with its status.
	Faults []Fault `json:"faults,omitempty"`
	// APIKey, when set, is required: a request without it (as a bearer
	// token or x-api-key) gets a 401.
	APIKey string `json:"api_key,omitempty"`
	// Model is the model the answers claim; "" echoes the requested one.
	Model string `json:"model,omitempty"`
}

// Rule answers the prompts that contain every string of Match.
type Rule struct {
	// Name identifies the rule in records and logs.
	Name string `json:"name"`
	// Match are substrings that must all appear in the prompt (system and
	// user messages); empty matches every prompt.
	Match []string `json:"match"`
	// Answers are returned in turn: the n-th request this rule answers
	// gets Answers[n], and the last answer repeats.
	Answers []string `json:"answers"`
}

// Fault makes requests fail with an HTTP status.
type Fault struct {
	// Match are substrings that must all appear in the prompt; empty
	// matches every request.
	Match []string `json:"match,omitempty"`
	// Status is the HTTP status to answer (429, 500, 401, ...).
	Status int `json:"status"`
	// RetryAfter is sent as the Retry-After header when not empty
	// (seconds, or an HTTP date).
	RetryAfter string `json:"retry_after,omitempty"`
	// Times is how many requests get this fault; 0 or less means every
	// matching request.
	Times int `json:"times,omitempty"`
	// Message is the error message; "" gives a standard one.
	Message string `json:"message,omitempty"`
}

// Validate reports the first problem of s: a rule without answers, a
// fault whose status is not an error.
func (s Script) Validate() error {
	for i, r := range s.Rules {
		if len(r.Answers) == 0 {
			return fmt.Errorf("fakellm: rules[%d] (%q) has no answers", i, r.Name)
		}
	}
	for i, f := range s.Faults {
		if f.Status < 400 || f.Status > 599 {
			return fmt.Errorf("fakellm: faults[%d] has status %d; give an HTTP error status (400-599)", i, f.Status)
		}
	}
	return nil
}

// ParseScript reads a Script from JSON; unknown fields are errors.
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("fakellm: script: %w", err)
	}
	return s, s.Validate()
}

// LoadScript reads a Script from a JSON file.
func LoadScript(path string) (Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("fakellm: %w", err)
	}
	s, err := ParseScript(b)
	if err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseFaults reads a JSON list of faults (the --faults flag).
func ParseFaults(data string) ([]Fault, error) {
	var fs []Fault
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fs); err != nil {
		return nil, fmt.Errorf("fakellm: faults: %w (want a JSON list such as [{\"status\": 429, \"retry_after\": \"1\", \"times\": 2}])", err)
	}
	return fs, Script{Faults: fs}.Validate()
}
