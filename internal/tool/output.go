package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/settdev/sett/internal/jsonkind"
)

// Limits that ParseOutput applies to a tool's output.
const (
	// MaxArtefactTypeLen is the longest accepted artefact_type, in bytes
	// (the allowed characters are all ASCII).
	MaxArtefactTypeLen = 128
	// MaxSummaryLen is the longest summary kept, in characters (runes); a
	// longer one is cut and ends in "…".
	MaxSummaryLen = 200
)

// Output fields, as the tool spells them.
const (
	fieldArtefactType    = "artefact_type"
	fieldArtefactPayload = "artefact_payload"
	fieldSummary         = "summary"
	fieldStructuralType  = "structural_type"
	fieldMemory          = "memory"
	fieldUsage           = "usage"
	fieldError           = "error"
	fieldRetryable       = "retryable"
)

// outputFields lists the accepted fields in the order error messages give.
var outputFields = []string{fieldArtefactType, fieldArtefactPayload, fieldSummary, fieldStructuralType, fieldMemory,
	fieldUsage, fieldError, fieldRetryable}

// outputStructuralTypes are the structural types a tool may ask for; the
// empty string means the cub's default (Standard).
var outputStructuralTypes = []string{"Review", "Question", "Terminal"}

// fieldHints maps names that authors commonly write by mistake to the field
// they meant.
var fieldHints = map[string]string{
	"type":             fieldArtefactType,
	"payload":          fieldArtefactPayload,
	"artifact_type":    fieldArtefactType,
	"artifact_payload": fieldArtefactPayload,
}

// Output is the one JSON document a tool prints on stdout, as ParseOutput
// returns it:
//
//   - ArtefactType is the user type of the new artefact; it may be "" only
//     on feedback claims, where the caller chooses the type.
//   - ArtefactPayload is the payload text. When the tool printed a JSON object
//     or array instead of a string, it holds that value as compact JSON.
//   - Summary is one line of at most MaxSummaryLen characters.
//   - StructuralType is "", "Review", "Question" or "Terminal".
//   - Memory is the tool's compact memory (§10) as compact JSON text of an
//     object, or nil when the tool returned none.
//   - Usage is what a model call cost, or nil when the tool reported none.
//   - Error is set when the tool reports that it failed (whatever its exit
//     code); artefact_type is then not required and the cub writes a
//     Failure. Retryable says whether running it again could help (nil:
//     the tool did not say, which counts as transient).
type Output struct {
	ArtefactType    string          `json:"artefact_type"`
	ArtefactPayload string          `json:"artefact_payload"`
	Summary         string          `json:"summary"`
	StructuralType  string          `json:"structural_type"`
	Memory          json.RawMessage `json:"memory"`
	Usage           *Usage          `json:"usage,omitempty"`
	Error           string          `json:"error,omitempty"`
	Retryable       *bool           `json:"retryable,omitempty"`
}

// Usage is the token cost a tool reports for the model calls it made on
// one claim; the cub stores it in the artefact's metadata (keys "model",
// "input_tokens", "output_tokens"), where budgets and listings read it.
type Usage struct {
	Model        string `json:"model"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
}

// MaxUsageTokens bounds each token count a tool may report: far above any
// real call, low enough that sums over a workflow never overflow.
const MaxUsageTokens = 1 << 40

// ParseOutput checks what a tool printed on stdout for a claim of type
// claimType and returns it as an Output.
//
// stdout must hold exactly one JSON object, optionally surrounded by JSON
// whitespace. Its fields are those of Output; artefact_type is required except
// on feedback and learn claims. Payloads larger than maxPayload bytes are refused;
// maxPayload <= 0 disables that check (the blackboard still enforces its own
// limit). A JSON null counts as an absent field.
//
// Every problem with the tool's output is reported as an *OutputError (which
// matches ErrInvalidOutput) that names all the faults found and what would
// have been accepted. An invalid claimType returns an error wrapping
// ErrUnknownClaimType.
func ParseOutput(stdout []byte, claimType ClaimType, maxPayload int) (Output, error) {
	if !claimType.Valid() {
		return Output{}, fmt.Errorf("%w %q", ErrUnknownClaimType, string(claimType))
	}
	obj, err := singleObject(stdout)
	if err != nil {
		return Output{}, err
	}
	fields, p := splitFields(obj)

	var out Output
	typeOK := true // false once artefact_type is known to be of the wrong kind
	if raw, ok := fields[fieldArtefactType]; ok {
		out.ArtefactType, typeOK = p.str(fieldArtefactType, raw, `such as "CodeCommit"`)
	}
	if raw, ok := fields[fieldArtefactPayload]; ok {
		out.ArtefactPayload = p.payload(raw)
	}
	if raw, ok := fields[fieldSummary]; ok {
		if s, ok := p.str(fieldSummary, raw, "of one line"); ok {
			out.Summary = oneLine(s, MaxSummaryLen)
		}
	}
	if raw, ok := fields[fieldStructuralType]; ok {
		if s, ok := p.str(fieldStructuralType, raw, "("+strings.Join(outputStructuralTypes, ", ")+")"); ok {
			out.StructuralType = s
		}
	}
	if raw, ok := fields[fieldMemory]; ok {
		out.Memory = p.memory(raw)
	}
	if raw, ok := fields[fieldUsage]; ok {
		out.Usage = p.usage(raw)
	}
	if raw, ok := fields[fieldError]; ok {
		if s, ok := p.str(fieldError, raw, "saying what went wrong"); ok {
			out.Error = strings.TrimSpace(s)
			if out.Error == "" {
				p.add(fieldError, "error is an empty string; say what went wrong, or leave the field out")
			}
		}
	}
	if raw, ok := fields[fieldRetryable]; ok {
		var b bool
		if jsonkind.Of(raw) != "boolean" || json.Unmarshal(raw, &b) != nil {
			p.add(fieldRetryable, fmt.Sprintf("retryable is a JSON %s; it must be true or false", jsonkind.Of(raw)))
		} else {
			out.Retryable = &b
		}
	}

	if typeOK && out.Error == "" {
		p.checkArtefactType(out.ArtefactType, claimType)
	}
	p.checkStructuralType(out.StructuralType)
	if maxPayload > 0 && len(out.ArtefactPayload) > maxPayload {
		p.add(fieldArtefactPayload, fmt.Sprintf(
			"artefact_payload is %d bytes, over the limit of %d bytes; write large results to the workspace and return a reference to them",
			len(out.ArtefactPayload), maxPayload))
	}
	if err := p.err(); err != nil {
		return Output{}, err
	}
	return out, nil
}

// jsonSpace holds the whitespace characters JSON allows between tokens.
const jsonSpace = " \t\r\n"

// singleObject returns the one JSON object that stdout must hold, or an
// *OutputError saying why stdout does not hold exactly that.
func singleObject(stdout []byte) (json.RawMessage, error) {
	if len(stdout) == 0 {
		return nil, &OutputError{Reason: "tool printed nothing on stdout; it must print one JSON object"}
	}
	lead := len(stdout) - len(bytes.TrimLeft(stdout, jsonSpace))
	doc := bytes.Trim(stdout, jsonSpace)
	if len(doc) == 0 {
		return nil, &OutputError{Reason: fmt.Sprintf(
			"tool printed only whitespace (%d bytes) on stdout; it must print one JSON object", len(stdout))}
	}

	dec := json.NewDecoder(bytes.NewReader(doc))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return nil, &OutputError{Reason: fmt.Sprintf(
			"stdout is not JSON (%s); the tool must print one JSON object on stdout and write its logs to stderr; stdout begins with %s",
			describeSyntaxError(err, lead), quoteHead(doc, 200))}
	}
	if k := jsonkind.Of(first); k != "object" {
		return nil, &OutputError{Reason: fmt.Sprintf(
			"stdout holds a JSON %s, not an object; the tool must print one JSON object such as {\"artefact_type\": \"Plan\", \"artefact_payload\": \"...\"}; stdout begins with %s",
			k, quoteHead(doc, 200))}
	}
	if rest := bytes.TrimLeft(doc[dec.InputOffset():], jsonSpace); len(rest) > 0 {
		return nil, &OutputError{Reason: fmt.Sprintf(
			"stdout holds more than one JSON value: the object is followed at offset %d by %s; print exactly one object and write logs to stderr",
			lead+len(doc)-len(rest), quoteHead(rest, 200))}
	}
	return first, nil
}

// describeSyntaxError renders a decoding error with its offset in the
// original stdout (lead is the number of whitespace bytes trimmed in front).
func describeSyntaxError(err error, lead int) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read up to and including the bad one.
		return fmt.Sprintf("%s at offset %d", se.Error(), lead+max(int(se.Offset)-1, 0))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the output ends in the middle of a JSON value"
	default:
		return err.Error()
	}
}

// problems collects what is wrong with an output object, so that one error
// names every fault at once.
type problems struct {
	field   string // field of the first problem
	reasons []string
}

func (p *problems) add(field, reason string) {
	if len(p.reasons) == 0 {
		p.field = field
	}
	p.reasons = append(p.reasons, reason)
}

// err returns nil when nothing was added, else one *OutputError whose reason
// numbers the problems when there are several.
func (p *problems) err() error {
	switch len(p.reasons) {
	case 0:
		return nil
	case 1:
		return &OutputError{Field: p.field, Reason: p.reasons[0]}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems:", len(p.reasons))
	for i, r := range p.reasons {
		fmt.Fprintf(&b, " (%d) %s.", i+1, r)
	}
	return &OutputError{Field: p.field, Reason: strings.TrimSuffix(b.String(), ".")}
}

// splitFields returns the known top-level fields of obj (a valid JSON object)
// with null values left out, and a problems value that already names unknown
// and repeated fields.
func splitFields(obj json.RawMessage) (map[string]json.RawMessage, *problems) {
	p := &problems{}
	fields := make(map[string]json.RawMessage, len(outputFields))
	seen := make(map[string]bool)
	var unknown, repeated []string

	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // the opening brace
		p.add("", "stdout is not a JSON object: "+err.Error())
		return fields, p
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			p.add("", "stdout is not a JSON object: "+err.Error())
			return fields, p
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			p.add(key, fmt.Sprintf("cannot read the value of %s: %v", quoteHead([]byte(key), 60), err))
			return fields, p
		}
		if seen[key] {
			if !slices.Contains(repeated, key) {
				repeated = append(repeated, key)
			}
			continue
		}
		seen[key] = true
		if !isOutputField(key) {
			unknown = append(unknown, key)
			continue
		}
		if jsonkind.Of(val) != "null" {
			fields[key] = val
		}
	}
	if len(unknown) > 0 {
		p.add(unknown[0], "unknown "+fieldList(unknown, true)+"; allowed fields are "+strings.Join(outputFields, ", "))
	}
	if len(repeated) > 0 {
		verb := "appears"
		if len(repeated) > 1 {
			verb = "appear"
		}
		p.add(repeated[0], fmt.Sprintf("%s %s more than once; give each field once", fieldList(repeated, false), verb))
	}
	return fields, p
}

func isOutputField(name string) bool {
	for _, f := range outputFields {
		if f == name {
			return true
		}
	}
	return false
}

// fieldList renders "field x" or "fields x, y, z" with at most five names
// quoted, and with a guess of what each was meant to be when hints is set.
func fieldList(names []string, hints bool) string {
	const shown = 5
	var b strings.Builder
	if len(names) == 1 {
		b.WriteString("field ")
	} else {
		b.WriteString("fields ")
	}
	for i, name := range names {
		if i == shown {
			fmt.Fprintf(&b, " and %d more", len(names)-shown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteHead([]byte(name), 60))
		if hint := suggestField(name); hints && hint != "" {
			fmt.Fprintf(&b, " (did you mean %q?)", hint)
		}
	}
	return b.String()
}

// suggestField returns the output field that name probably means, or "".
func suggestField(name string) string {
	lower := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	if hint, ok := fieldHints[lower]; ok {
		return hint
	}
	for _, f := range outputFields {
		if f == lower {
			return f
		}
	}
	return ""
}

// str decodes raw as a JSON string for field; on another kind it records a
// problem that says what the field holds and what it should hold (want
// completes "must be a string ...").
func (p *problems) str(field string, raw json.RawMessage, want string) (string, bool) {
	if k := jsonkind.Of(raw); k != "string" {
		if want != "" {
			want = " " + want
		}
		p.add(field, fmt.Sprintf("%s is a JSON %s; it must be a string%s", field, k, want))
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		p.add(field, fmt.Sprintf("%s is not a valid JSON string: %v", field, err))
		return "", false
	}
	return s, true
}

// payload returns artefact_payload: a string as it is, an object or array as
// compact JSON text. Other kinds are recorded as problems.
func (p *problems) payload(raw json.RawMessage) string {
	switch k := jsonkind.Of(raw); k {
	case "string":
		s, _ := p.str(fieldArtefactPayload, raw, "")
		return s
	case "object", "array":
		return compactJSON(raw)
	default:
		p.add(fieldArtefactPayload, fmt.Sprintf(
			"artefact_payload is a JSON %s; it must be a string, or a JSON object or array (kept as compact JSON text); quote it to send it as text", k))
		return ""
	}
}

// memory returns the tool's memory object as compact JSON, or records a
// problem when it is not an object.
func (p *problems) memory(raw json.RawMessage) json.RawMessage {
	if k := jsonkind.Of(raw); k != "object" {
		p.add(fieldMemory, fmt.Sprintf(
			"memory is a JSON %s; it must be a JSON object (status, key_findings, highest_severity, decisions, artifact_index) or be left out", k))
		return nil
	}
	return json.RawMessage(compactJSON(raw))
}

// usage decodes the usage object: a model name and two non-negative token
// counts.
func (p *problems) usage(raw json.RawMessage) *Usage {
	if k := jsonkind.Of(raw); k != "object" {
		p.add(fieldUsage, fmt.Sprintf(
			"usage is a JSON %s; it must be an object such as {\"model\": \"gpt-4o\", \"input_tokens\": 812, \"output_tokens\": 95}", k))
		return nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		p.add(fieldUsage, "usage is not a valid JSON object: "+err.Error())
		return nil
	}
	u := &Usage{}
	ok := true
	for key, v := range doc {
		switch key {
		case "model":
			var s string
			if jsonkind.Of(v) != "string" || json.Unmarshal(v, &s) != nil || len(s) > 200 {
				p.add(fieldUsage, "usage.model must be a string of at most 200 bytes")
				ok = false
			}
			u.Model = s
		case "input_tokens", "output_tokens":
			var n int64
			if jsonkind.Of(v) != "number" || json.Unmarshal(v, &n) != nil || n < 0 || n > MaxUsageTokens {
				p.add(fieldUsage, fmt.Sprintf("usage.%s must be a whole number between 0 and %d", key, int64(MaxUsageTokens)))
				ok = false
			}
			if key == "input_tokens" {
				u.InputTokens = n
			} else {
				u.OutputTokens = n
			}
		default:
			p.add(fieldUsage, fmt.Sprintf("usage has the unknown field %s; allowed are model, input_tokens, output_tokens", quoteHead([]byte(key), 60)))
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return u
}

// checkArtefactType records a problem when t is missing on a claim that needs
// it or is not 1..MaxArtefactTypeLen characters of [A-Za-z0-9_.:-].
func (p *problems) checkArtefactType(t string, claimType ClaimType) {
	if t == "" {
		if claimType != ClaimTypeFeedback && claimType != ClaimTypeLearn {
			p.add(fieldArtefactType, fmt.Sprintf(
				"artefact_type is missing; it is required when claim_type is %q (only feedback and learn claims may leave it out)", claimType))
		}
		return
	}
	for i, r := range t {
		if !isTypeChar(r) {
			p.add(fieldArtefactType, fmt.Sprintf(
				"artefact_type %s has the character %q at byte %d; only letters A-Z a-z, digits and _ . : - are allowed",
				quoteHead([]byte(t), 60), r, i))
			return
		}
	}
	// All characters are ASCII now, so bytes are characters.
	if len(t) > MaxArtefactTypeLen {
		p.add(fieldArtefactType, fmt.Sprintf(
			"artefact_type is %d characters long; at most %d are allowed", len(t), MaxArtefactTypeLen))
	}
}

func isTypeChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	case r == '_', r == '.', r == ':', r == '-':
		return true
	}
	return false
}

// checkStructuralType records a problem when st is not "" or one of
// outputStructuralTypes.
func (p *problems) checkStructuralType(st string) {
	if st == "" {
		return
	}
	for _, allowed := range outputStructuralTypes {
		if st == allowed {
			return
		}
	}
	p.add(fieldStructuralType, fmt.Sprintf(
		"structural_type %s is not allowed; use one of %s, or leave it out for a standard artefact",
		quoteHead([]byte(st), 60), strings.Join(outputStructuralTypes, ", ")))
}

// compactJSON returns raw (valid JSON) without insignificant whitespace.
// Invalid UTF-8 can only occur inside JSON strings, so replacing it keeps the
// text valid JSON and makes it safe to store and re-encode.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		// Unreachable for a value the decoder accepted; keep the text rather
		// than lose the tool's work.
		return strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// oneLine turns s into a single line of at most limit characters: every line
// is trimmed, empty lines dropped, the rest joined with one space, other
// control characters become spaces, and a cut line ends in "…".
func oneLine(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x85 || r == 0x2028 || r == 0x2029:
			return '\n'
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(line)
	}
	s = b.String()
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	runes := []rune(s)
	return strings.TrimRightFunc(string(runes[:limit-1]), unicode.IsSpace) + "…"
}

// quoteHead quotes (Go syntax, invalid UTF-8 escaped) at most n bytes of b,
// cut on a character boundary and marked with "…" when cut.
func quoteHead(b []byte, n int) string {
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	cut := n
	for cut > 0 && cut > n-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strconv.Quote(string(b[:cut])) + "…"
}
