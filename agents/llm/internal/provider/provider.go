package provider

import "context"

// Provider sends one request to a chat model. Implementations make one
// HTTP attempt per call (no retries of their own) and return errors that
// Classify understands: a *StatusError for an HTTP error answer, anything
// else for transport errors. They are safe for concurrent use.
type Provider interface {
	// Name is the provider's name as LLM_PROVIDER spells it.
	Name() string
	// Complete sends req and returns the model's answer.
	Complete(ctx context.Context, req Request) (Response, error)
}

// Request is one prompt for a chat model.
type Request struct {
	// Model is the model name the provider knows ("gpt-4o-mini",
	// "llama3.1", "claude-sonnet-4-5").
	Model string
	// System holds the instructions; may be empty.
	System string
	// User is the user message.
	User string
	// MaxTokens bounds the answer; 0 leaves it to the provider (OpenAI)
	// or to DefaultAnthropicMaxTokens (Anthropic requires one).
	MaxTokens int64
	// Temperature, when not nil, is sent as it is.
	Temperature *float64
	// JSON asks for a JSON object as the answer, where the provider can
	// enforce it (OpenAI-compatible response_format); Schema, when not
	// nil, is the JSON Schema the object must follow (named SchemaName).
	JSON       bool
	Schema     map[string]any
	SchemaName string
}

// StopReason says why the model stopped.
type StopReason string

// The stop reasons the agent tells apart.
const (
	// StopDone: the model finished its answer.
	StopDone StopReason = "stop"
	// StopLength: the answer was cut at the token limit.
	StopLength StopReason = "length"
	// StopRefusal: the model refused to answer.
	StopRefusal StopReason = "refusal"
)

// Response is a model's answer.
type Response struct {
	// Text is the answer (for a refusal, the refusal text).
	Text string
	// Model is the model that answered, as the provider reports it (the
	// requested one when it reports none).
	Model string
	// InputTokens and OutputTokens are what the call cost.
	InputTokens  int64
	OutputTokens int64
	// Stop says why the model stopped; other provider values are kept as
	// they are.
	Stop StopReason
	// Attempts is set by Retrier.Complete: how many calls it took.
	Attempts int
}
