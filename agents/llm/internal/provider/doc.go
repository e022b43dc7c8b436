// Package provider calls chat models for the LLM agent: any
// OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM,
// llama.cpp's server, LM Studio) through github.com/openai/openai-go, and
// the Anthropic Messages API through github.com/anthropics/anthropic-sdk-go.
//
// A Provider makes exactly one HTTP attempt per call: both SDKs' own retries
// are switched off so that the project has one retry policy, the [Retrier]
// (cenkalti/backoff/v4), which retries 429 and 5xx answers and transport
// errors with exponential backoff, honours Retry-After (seconds or an HTTP
// date), and gives up at a deadline derived from the tool's timeout.
// [Classify] tells the Retrier what may be retried; a rejected key (401,
// 403) never is.
package provider
