package tool

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	cubtool "github.com/settdev/sett/internal/tool"
)

func TestWriteFailureIsAContractFailure(t *testing.T) {
	red := NewRedactor("sk-secret-123456", "", "x")
	usage := &Usage{Model: "m", InputTokens: 3, OutputTokens: 4}
	for _, tc := range []struct {
		name          string
		err           error
		wantRetryable *bool
	}{
		{name: "permanent", err: Permanent("key sk-secret-123456 refused: %v", errors.New("401")), wantRetryable: ptr(false)},
		{name: "transient", err: Transient("rate limited"), wantRetryable: ptr(true)},
		{name: "plain", err: errors.New("boom"), wantRetryable: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteFailure(&b, tc.err, usage, red); err != nil {
				t.Fatal(err)
			}
			// The cub parses a failing tool's stdout like this.
			out, err := cubtool.ParseOutput(b.Bytes(), ClaimTypeFeedback, 0)
			if err != nil {
				t.Fatalf("%s: %v", b.String(), err)
			}
			if strings.Contains(out.Error, "sk-secret") {
				t.Errorf("the key was printed: %s", out.Error)
			}
			if out.Error == "" || *out.Usage != *usage {
				t.Errorf("out = %+v", out)
			}
			if (out.Retryable == nil) != (tc.wantRetryable == nil) || (out.Retryable != nil && *out.Retryable != *tc.wantRetryable) {
				t.Errorf("retryable = %v, want %v", out.Retryable, tc.wantRetryable)
			}
		})
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor("abcdef", "abcdefgh", "short")
	if got := r.Redact("k=abcdefgh, j=abcdef, s=short"); got != "k=[REDACTED], j=[REDACTED], s=short" {
		t.Errorf("Redact = %q", got)
	}
	var nilR *Redactor
	if nilR.Redact("abcdef") != "abcdef" {
		t.Error("a nil Redactor must redact nothing")
	}
}

func TestReadInput(t *testing.T) {
	in, err := ReadInput(strings.NewReader(`{"claim_type":"learn","workflow":{"goal":"g"}}`))
	if err != nil || in.ClaimType != ClaimTypeLearn || in.Workflow.Goal != "g" {
		t.Fatalf("in = %+v, %v", in, err)
	}
	for _, bad := range []string{`{"claim_type":"dance"}`, `not json`} {
		_, err := ReadInput(strings.NewReader(bad))
		if f, ok := AsFailure(err); !ok || f.Retryable {
			t.Errorf("%s: err = %v, want a permanent Failure", bad, err)
		}
	}
}

func ptr(b bool) *bool { return &b }
