// Package fakellm is a deterministic stand-in for a chat model provider,
// for tests and demos: it speaks the OpenAI Chat Completions API
// (POST /v1/chat/completions) and the Anthropic Messages API
// (POST /v1/messages), and answers by rules, never by model logic.
//
// A [Script] lists rules (every substring of Match must be in the prompt;
// the n-th request a rule matches gets its n-th answer, the last one
// repeating, so "first plan rejected, second approved" is two answers) and
// faults to inject (N×429 with a Retry-After, 500, 401), and may require an
// API key. Every request is recorded — prompt, model, response_format,
// whether a key came, the rule that answered, the status — and served at
// GET /requests (and optionally appended to a JSON-lines file) so that
// tests can assert what the prompt contained. Keys are never recorded.
//
// [Server] is an http.Handler, so tests run it with httptest; the command
// sett-fake-llm (cmd/sett-fake-llm, image sett-fake-llm:local) serves it
// for demos and Docker end-to-end tests.
package fakellm
