// Package jsonkind names the kind of a JSON value for error messages
// ("memory.learnings is a string, want an array"), from its first byte.
package jsonkind

import "bytes"

// Of names the kind of the JSON value raw: object, array, string,
// boolean, null, number, or nothing when raw is empty or only space.
// It looks at the first byte after JSON whitespace only: it is meant for
// values a decoder has already parsed or refused, to say what was there.
func Of(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
