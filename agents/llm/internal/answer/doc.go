// Package answer turns a model's text into what a Sett artefact carries:
// Markdown text, the review verdict, one learning or a
// JSON object.
//
// Models wrap structured answers in code fences, put prose before them or
// after them, or prefix them with reasoning (<think>…</think>); the parsers
// here look past all of that. An answer that still cannot be used is a
// *ParseError that quotes the model's text, so that the Failure artefact
// shows what the model said.
package answer
