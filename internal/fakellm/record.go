package fakellm

import "time"

// Record is one request as the Server saw it and what it answered. Keys
// are never recorded; HasKey says whether one came.
type Record struct {
	// Seq numbers the requests from 1.
	Seq int `json:"seq"`
	// API is "openai" or "anthropic".
	API string `json:"api"`
	// Path is the request path.
	Path string `json:"path"`
	// Model is the model the request asked for.
	Model string `json:"model"`
	// System and User are the prompt: the system instructions and the user
	// messages (joined by blank lines when several).
	System string `json:"system"`
	User   string `json:"user"`
	// ResponseFormat is the OpenAI response_format type asked for
	// ("json_schema", "json_object", "text") or "".
	ResponseFormat string `json:"response_format,omitempty"`
	// MaxTokens is the answer bound asked for (max_completion_tokens,
	// max_tokens), 0 when none.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// HasKey says whether the request carried an API key.
	HasKey bool `json:"has_key"`
	// Rule is the rule that answered, or "" (a fault, an error).
	Rule string `json:"rule,omitempty"`
	// Fault is the index of the fault injected, or -1.
	Fault int `json:"fault"`
	// Status is the HTTP status answered.
	Status int `json:"status"`
	// Answer is the text answered, or the error message.
	Answer string `json:"answer"`
	// ReceivedAt is when the request arrived, RespondedAt when its answer
	// had been written (both with the server's monotonic clock in
	// process).
	ReceivedAt  time.Time `json:"received_at"`
	RespondedAt time.Time `json:"responded_at"`
}

// Prompt is the text rules and faults match against.
func (r Record) Prompt() string { return r.System + "\n" + r.User }
