package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestParseOutput(t *testing.T) {
	longSummary := "First line of a summary\n\n   second line\r\nthird\tline " + strings.Repeat("word ", 80)
	tests := []struct {
		name       string
		stdout     string
		claimType  ClaimType
		maxPayload int
		want       Output
		wantField  string   // when an error is expected
		wantErr    []string // substrings of the error; nil means success
	}{
		{
			name:      "string payload kept as it is",
			stdout:    `{"artefact_type":"Plan","artefact_payload":"step 1\nstep 2 {\"x\": 1}","summary":"A plan"}`,
			claimType: ClaimTypeExclusive,
			want:      Output{ArtefactType: "Plan", ArtefactPayload: "step 1\nstep 2 {\"x\": 1}", Summary: "A plan"},
		},
		{
			name:      "surrounding whitespace allowed",
			stdout:    " \n\t{\"artefact_type\": \"CodeCommit\", \"artefact_payload\": \"abc123\"}\n\n",
			claimType: ClaimTypeClaim,
			want:      Output{ArtefactType: "CodeCommit", ArtefactPayload: "abc123"},
		},
		{
			name:      "object payload kept as compact JSON",
			stdout:    `{"artefact_type": "CodeReview", "structural_type": "Review", "artefact_payload": {"verdict": "approve", "findings": [ ], "note": "<b>&</b>"}}`,
			claimType: ClaimTypeReview,
			want: Output{ArtefactType: "CodeReview", StructuralType: "Review",
				ArtefactPayload: `{"verdict":"approve","findings":[],"note":"<b>&</b>"}`},
		},
		{
			name:      "array payload kept as compact JSON",
			stdout:    `{"artefact_type":"CodeReview","artefact_payload":[ ]}`,
			claimType: ClaimTypeReview,
			want:      Output{ArtefactType: "CodeReview", ArtefactPayload: `[]`},
		},
		{
			name:      "feedback claim may omit artefact_type",
			stdout:    `{"artefact_payload":"reworked"}`,
			claimType: ClaimTypeFeedback,
			want:      Output{ArtefactPayload: "reworked"},
		},
		{
			name:      "null fields count as absent",
			stdout:    `{"artefact_type":null,"artefact_payload":null,"summary":null,"structural_type":null,"memory":null}`,
			claimType: ClaimTypeFeedback,
			want:      Output{},
		},
		{
			name:      "all structural types and memory",
			stdout:    `{"artefact_type":"Ask","structural_type":"Question","artefact_payload":"why?","memory":{ "status": "DONE", "key_findings": ["a"] }}`,
			claimType: ClaimTypeClaim,
			want: Output{ArtefactType: "Ask", StructuralType: "Question", ArtefactPayload: "why?",
				Memory: json.RawMessage(`{"status":"DONE","key_findings":["a"]}`)},
		},
		{
			name:      "usage is kept",
			stdout:    `{"artefact_type":"Plan","artefact_payload":"p","usage":{"model":"gpt-4o","input_tokens":812,"output_tokens":95}}`,
			claimType: ClaimTypeExclusive,
			want: Output{ArtefactType: "Plan", ArtefactPayload: "p",
				Usage: &Usage{Model: "gpt-4o", InputTokens: 812, OutputTokens: 95}},
		},
		{
			name:      "a reported error needs no artefact_type",
			stdout:    `{"error":"rate limited by the provider","retryable":false,"usage":{"model":"m","input_tokens":1,"output_tokens":0}}`,
			claimType: ClaimTypeClaim,
			want: Output{Error: "rate limited by the provider", Retryable: boolPtr(false),
				Usage: &Usage{Model: "m", InputTokens: 1}},
		},
		{
			name:      "learn claims answer like any other",
			stdout:    `{"artefact_type":"Learning","artefact_payload":"Check accounting first."}`,
			claimType: ClaimTypeLearn,
			want:      Output{ArtefactType: "Learning", ArtefactPayload: "Check accounting first."},
		},
		{
			name:      "terminal structural type",
			stdout:    `{"artefact_type":"Done","structural_type":"Terminal"}`,
			claimType: ClaimTypeClaim,
			want:      Output{ArtefactType: "Done", StructuralType: "Terminal"},
		},
		{
			name:      "artefact_type of 128 allowed characters",
			stdout:    `{"artefact_type":"` + strings.Repeat("aZ0_.:-x", 16) + `"}`,
			claimType: ClaimTypeClaim,
			want:      Output{ArtefactType: strings.Repeat("aZ0_.:-x", 16)},
		},
		{
			name:       "payload at the limit",
			stdout:     `{"artefact_type":"T","artefact_payload":"12345"}`,
			claimType:  ClaimTypeClaim,
			maxPayload: 5,
			want:       Output{ArtefactType: "T", ArtefactPayload: "12345"},
		},
		{
			name:      "multi-line summary becomes one line",
			stdout:    `{"artefact_type":"T","summary":"  Fixed the bug\n\n- in parser\r\n- in\tlexer  \n"}`,
			claimType: ClaimTypeClaim,
			want:      Output{ArtefactType: "T", Summary: "Fixed the bug - in parser - in lexer"},
		},
		{
			name:      "long summary truncated with an ellipsis",
			stdout:    `{"artefact_type":"T","summary":` + quoteJSON(longSummary) + `}`,
			claimType: ClaimTypeClaim,
			want: Output{ArtefactType: "T",
				Summary: truncateRunes("First line of a summary second line third line "+strings.Repeat("word ", 80), 199) + "…"},
		},
		{
			name:      "empty stdout",
			stdout:    "",
			claimType: ClaimTypeClaim,
			wantErr:   []string{"tool printed nothing on stdout; it must print one JSON object"},
		},
		{
			name:      "whitespace only",
			stdout:    " \n\n",
			claimType: ClaimTypeClaim,
			wantErr:   []string{"only whitespace", "one JSON object"},
		},
		{
			name:      "not JSON quotes the beginning",
			stdout:    "Starting work...\n{\"artefact_type\":\"Plan\"}",
			claimType: ClaimTypeClaim,
			wantErr:   []string{"stdout is not JSON", "invalid character 'S' looking for beginning of value at offset 0", `"Starting work...\n{`, "stderr"},
		},
		{
			name:      "not JSON quote is cut and escaped",
			stdout:    "\x00\xff" + strings.Repeat("z", 400),
			claimType: ClaimTypeClaim,
			wantErr:   []string{"stdout is not JSON", `"\x00\xff` + strings.Repeat("z", 198) + `"…`},
		},
		{
			name:      "truncated JSON",
			stdout:    `{"artefact_type":"Plan","artefact_payload":"abc`,
			claimType: ClaimTypeClaim,
			wantErr:   []string{"stdout is not JSON", "ends in the middle of a JSON value"},
		},
		{
			name:      "array instead of an object",
			stdout:    `[{"artefact_type":"Plan"}]`,
			claimType: ClaimTypeClaim,
			wantErr:   []string{"stdout holds a JSON array, not an object"},
		},
		{
			name:      "string instead of an object",
			stdout:    `"approve"`,
			claimType: ClaimTypeReview,
			wantErr:   []string{"stdout holds a JSON string, not an object"},
		},
		{
			name:      "second JSON object",
			stdout:    `{"artefact_type":"Plan"}` + "\n" + `{"artefact_type":"Plan"}`,
			claimType: ClaimTypeClaim,
			wantErr:   []string{"stdout holds more than one JSON value", "followed at offset 25 by"},
		},
		{
			name:      "trailing text",
			stdout:    `{"artefact_type":"Plan"} done.`,
			claimType: ClaimTypeClaim,
			wantErr:   []string{"stdout holds more than one JSON value", `"done."`},
		},
		{
			name:      "missing artefact_type",
			stdout:    `{"artefact_payload":"x"}`,
			claimType: ClaimTypeExclusive,
			wantField: "artefact_type",
			wantErr:   []string{"artefact_type is missing", `required when claim_type is "exclusive"`, "only feedback and learn claims"},
		},
		{
			name:      "empty artefact_type on a review",
			stdout:    `{"artefact_type":"","artefact_payload":"{}"}`,
			claimType: ClaimTypeReview,
			wantField: "artefact_type",
			wantErr:   []string{"artefact_type is missing", `required when claim_type is "review"`},
		},
		{
			name:      "artefact_type with a space",
			stdout:    `{"artefact_type":"Code Commit"}`,
			claimType: ClaimTypeClaim,
			wantField: "artefact_type",
			wantErr:   []string{`artefact_type "Code Commit" has the character ' ' at byte 4`, "_ . : -"},
		},
		{
			name:      "artefact_type too long",
			stdout:    `{"artefact_type":"` + strings.Repeat("a", 129) + `"}`,
			claimType: ClaimTypeClaim,
			wantField: "artefact_type",
			wantErr:   []string{"artefact_type is 129 characters long; at most 128"},
		},
		{
			name:      "artefact_type wrong type",
			stdout:    `{"artefact_type":["Plan"]}`,
			claimType: ClaimTypeClaim,
			wantField: "artefact_type",
			wantErr:   []string{"tool: invalid output: artefact_type is a JSON array; it must be a string such as \"CodeCommit\""},
		},
		{
			name:      "payload is a number",
			stdout:    `{"artefact_type":"Count","artefact_payload":42}`,
			claimType: ClaimTypeClaim,
			wantField: "artefact_payload",
			wantErr:   []string{"artefact_payload is a JSON number; it must be a string, or a JSON object or array"},
		},
		{
			name:      "payload is a boolean",
			stdout:    `{"artefact_type":"Vote","artefact_payload":true}`,
			claimType: ClaimTypeClaim,
			wantErr:   []string{"artefact_payload is a JSON boolean"},
		},
		{
			name:       "oversize payload",
			stdout:     `{"artefact_type":"Big","artefact_payload":"` + strings.Repeat("x", 2000) + `"}`,
			claimType:  ClaimTypeClaim,
			maxPayload: 1024,
			wantField:  "artefact_payload",
			wantErr:    []string{"artefact_payload is 2000 bytes, over the limit of 1024 bytes"},
		},
		{
			name:       "oversize object payload measured as compact JSON",
			stdout:     `{"artefact_type":"Big","artefact_payload":{"k": "` + strings.Repeat("x", 20) + `"}}`,
			claimType:  ClaimTypeClaim,
			maxPayload: 10,
			wantErr:    []string{"artefact_payload is 28 bytes, over the limit of 10 bytes"},
		},
		{
			name:      "unknown field",
			stdout:    `{"artefact_type":"Plan","artefact_payload":"x","confidence":0.9}`,
			claimType: ClaimTypeClaim,
			wantField: "confidence",
			wantErr: []string{`unknown field "confidence"`,
				"allowed fields are artefact_type, artefact_payload, summary, structural_type, memory"},
		},
		{
			name:      "unknown fields with hints",
			stdout:    `{"type":"Plan","Payload":"x","Summary":"s"}`,
			claimType: ClaimTypeClaim,
			wantErr: []string{`unknown fields "type" (did you mean "artefact_type"?)`,
				`"Payload" (did you mean "artefact_payload"?)`, `"Summary" (did you mean "summary"?)`},
		},
		{
			name:      "repeated field",
			stdout:    `{"artefact_type":"Plan","artefact_type":"Other"}`,
			claimType: ClaimTypeClaim,
			wantField: "artefact_type",
			wantErr:   []string{"field \"artefact_type\" appears more than once"},
		},
		{
			name:      "many repeated fields named once each",
			stdout:    "{" + strings.Repeat(`"a":1,"b":2,`, 1000) + `"artefact_type":"Plan"}`,
			claimType: ClaimTypeClaim,
			wantErr:   []string{`2 problems: (1) unknown fields "a", "b"; allowed`, `(2) fields "a", "b" appear more than once`},
		},
		{
			name:      "long list of unknown fields is cut",
			stdout:    `{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"artefact_type":"Plan"}`,
			claimType: ClaimTypeClaim,
			wantErr:   []string{`unknown fields "a", "b", "c", "d", "e" and 2 more; allowed`},
		},
		{
			name:      "bad structural_type",
			stdout:    `{"artefact_type":"Plan","structural_type":"Failure"}`,
			claimType: ClaimTypeClaim,
			wantField: "structural_type",
			wantErr:   []string{`structural_type "Failure" is not allowed`, "Review, Question, Terminal"},
		},
		{
			name:      "structural_type is case sensitive",
			stdout:    `{"artefact_type":"Plan","structural_type":"review"}`,
			claimType: ClaimTypeReview,
			wantErr:   []string{`structural_type "review" is not allowed`},
		},
		{
			name:      "summary wrong type",
			stdout:    `{"artefact_type":"Plan","summary":["a","b"]}`,
			claimType: ClaimTypeClaim,
			wantErr:   []string{"summary is a JSON array; it must be a string"},
		},
		{
			name:      "usage with a negative count",
			stdout:    `{"artefact_type":"Plan","usage":{"model":"m","input_tokens":-3}}`,
			claimType: ClaimTypeClaim,
			wantField: "usage",
			wantErr:   []string{"usage.input_tokens must be a whole number"},
		},
		{
			name:      "usage with an unknown field",
			stdout:    `{"artefact_type":"Plan","usage":{"model":"m","cost":1}}`,
			claimType: ClaimTypeClaim,
			wantField: "usage",
			wantErr:   []string{`usage has the unknown field "cost"`},
		},
		{
			name:      "retryable not a boolean",
			stdout:    `{"error":"x","retryable":"no"}`,
			claimType: ClaimTypeClaim,
			wantField: "retryable",
			wantErr:   []string{"retryable is a JSON string; it must be true or false"},
		},
		{
			name:      "empty error",
			stdout:    `{"error":"  "}`,
			claimType: ClaimTypeClaim,
			wantField: "error",
			wantErr:   []string{"error is an empty string"},
		},
		{
			name:      "memory not an object",
			stdout:    `{"artefact_type":"Plan","memory":"remember this"}`,
			claimType: ClaimTypeClaim,
			wantField: "memory",
			wantErr:   []string{"memory is a JSON string; it must be a JSON object"},
		},
		{
			name:      "every problem reported at once",
			stdout:    `{"artefact_payload":7,"structural_type":"Nope","extra":1}`,
			claimType: ClaimTypeClaim,
			wantField: "extra",
			wantErr: []string{`4 problems: (1) unknown field "extra"`, "(2) artefact_payload is a JSON number",
				"(3) artefact_type is missing", `(4) structural_type "Nope"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOutput([]byte(tt.stdout), tt.claimType, tt.maxPayload)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("ParseOutput() error = %v", err)
				}
				assertOutput(t, got, tt.want)
				return
			}
			oe := requireOutputError(t, err)
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\ndoes not contain %q", err, want)
				}
			}
			if tt.wantField != "" && oe.Field != tt.wantField {
				t.Errorf("Field = %q, want %q", oe.Field, tt.wantField)
			}
			if got.ArtefactType != "" || got.ArtefactPayload != "" || got.Memory != nil {
				t.Errorf("ParseOutput() returned %+v with an error, want the zero Output", got)
			}
		})
	}
}

func TestParseOutputUnknownClaimType(t *testing.T) {
	_, err := ParseOutput([]byte(`{"artefact_type":"Plan"}`), "bogus", 0)
	if !errors.Is(err, ErrUnknownClaimType) {
		t.Fatalf("error = %v, want ErrUnknownClaimType", err)
	}
	if errors.Is(err, ErrInvalidOutput) {
		t.Errorf("a caller's bad claim type must not be reported as the tool's invalid output")
	}
}

func TestOutputErrorMessage(t *testing.T) {
	err := error(&OutputError{Field: "summary", Reason: "summary is a JSON number"})
	if got, want := err.Error(), "tool: invalid output: summary is a JSON number"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, ErrInvalidOutput) {
		t.Errorf("errors.Is(err, ErrInvalidOutput) = false")
	}
}

// FuzzParseOutput checks that ParseOutput never panics and returns either an
// Output that obeys every rule or an *OutputError.
func FuzzParseOutput(f *testing.F) {
	seeds := []string{
		``, ` `, `{}`, `[]`, `null`, `"x"`, `{"artefact_type":"Plan"}`,
		`{"artefact_type":"Plan","artefact_payload":"p","summary":"s\nt","structural_type":"Review","memory":{}}`,
		`{"artefact_payload":{"verdict":"reject","findings":[{"severity":"Major"}]}}`,
		`{"artefact_type":"Plan"}{"artefact_type":"Plan"}`,
		`{"artefact_type":"Plan","artefact_type":"x"}`,
		`{"artefact_type":1e999,"artefact_payload":[1,2,{"a":"\ud800"}]}`,
		"{\"artefact_payload\":{\"a\":\"\xff\"},\"summary\":\"\xfe\u2028x\"}",
		`{"summary":"` + strings.Repeat("é", 300) + `"}`,
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i), 64)
	}
	f.Fuzz(func(t *testing.T, stdout []byte, claim uint8, maxPayload int) {
		types := AllClaimTypes()
		claimType := types[int(claim)%len(types)]
		out, err := ParseOutput(stdout, claimType, maxPayload)
		if err != nil {
			oe := requireOutputError(t, err)
			if oe.Reason == "" {
				t.Fatalf("OutputError without a reason")
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error message is not valid UTF-8: %q", err.Error())
			}
			return
		}
		if !json.Valid(stdout) {
			t.Fatalf("accepted stdout that is not one JSON value: %q", stdout)
		}
		checkOutputRules(t, out, claimType, maxPayload)
	})
}

// checkOutputRules fails t when out breaks a rule that ParseOutput promises.
func checkOutputRules(t testing.TB, out Output, claimType ClaimType, maxPayload int) {
	t.Helper()
	if out.ArtefactType == "" && claimType != ClaimTypeFeedback {
		t.Errorf("empty artefact_type accepted on a %s claim", claimType)
	}
	if len(out.ArtefactType) > MaxArtefactTypeLen {
		t.Errorf("artefact_type of %d bytes accepted", len(out.ArtefactType))
	}
	for _, r := range out.ArtefactType {
		if !isTypeChar(r) {
			t.Errorf("artefact_type %q accepted with %q", out.ArtefactType, r)
		}
	}
	switch out.StructuralType {
	case "", "Review", "Question", "Terminal":
	default:
		t.Errorf("structural_type %q accepted", out.StructuralType)
	}
	if maxPayload > 0 && len(out.ArtefactPayload) > maxPayload {
		t.Errorf("payload of %d bytes accepted with limit %d", len(out.ArtefactPayload), maxPayload)
	}
	if !utf8.ValidString(out.ArtefactPayload) || !utf8.ValidString(out.Summary) {
		t.Errorf("invalid UTF-8 in %+v", out)
	}
	if n := utf8.RuneCountInString(out.Summary); n > MaxSummaryLen {
		t.Errorf("summary of %d characters", n)
	}
	if strings.TrimSpace(out.Summary) != out.Summary || strings.IndexFunc(out.Summary, unicode.IsControl) >= 0 ||
		strings.ContainsAny(out.Summary, "\u2028\u2029") {
		t.Errorf("summary %q is not one trimmed line", out.Summary)
	}
	if out.Memory != nil && (!json.Valid(out.Memory) || out.Memory[0] != '{') {
		t.Errorf("memory %q is not a JSON object", out.Memory)
	}
}

func requireOutputError(t testing.TB, err error) *OutputError {
	t.Helper()
	var oe *OutputError
	if !errors.As(err, &oe) {
		t.Fatalf("error = %v (%T), want an *OutputError", err, err)
	}
	if !errors.Is(err, ErrInvalidOutput) {
		t.Fatalf("errors.Is(%v, ErrInvalidOutput) = false", err)
	}
	if !strings.HasPrefix(err.Error(), "tool: ") {
		t.Fatalf("error %q lacks the package prefix", err)
	}
	return oe
}

func assertOutput(t testing.TB, got, want Output) {
	t.Helper()
	if got.ArtefactType != want.ArtefactType || got.ArtefactPayload != want.ArtefactPayload ||
		got.Summary != want.Summary || got.StructuralType != want.StructuralType ||
		!bytes.Equal(got.Memory, want.Memory) || got.Error != want.Error ||
		!reflect.DeepEqual(got.Usage, want.Usage) || !reflect.DeepEqual(got.Retryable, want.Retryable) {
		t.Errorf("ParseOutput() =\n%+v\nwant\n%+v", got, want)
	}
}

func boolPtr(b bool) *bool { return &b }

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func truncateRunes(s string, n int) string {
	return strings.TrimRightFunc(string([]rune(s)[:n]), unicode.IsSpace)
}
