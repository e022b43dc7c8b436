package answer

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseVerdictTolerates(t *testing.T) {
	want := Verdict{Verdict: "reject", Severity: "Major", Findings: []string{"Name the file.", "Add a test."}}
	for _, tc := range []struct{ name, in string }{
		{name: "bare", in: `{"verdict":"reject","severity":"Major","findings":["Name the file.","Add a test."]}`},
		{name: "fenced", in: "```json\n{\"verdict\": \"reject\", \"severity\": \"major\", \"findings\": [\"Name the file.\", \"Add a test.\"]}\n```"},
		{name: "prose around", in: "Here is my review:\n{\"verdict\": \"REJECTED\", \"severity\": \"Major\", \"findings\": [\"Name the file.\", \"Add a test.\"]}\nHope this helps {not json}."},
		{name: "reasoning first", in: "<think>The plan {is} vague.</think>\n{\"verdict\":\"reject\",\"severity\":\"Major\",\"findings\":[\"Name the file.\",\" Add a test. \",\"\"]}"},
		{name: "prose with braces before", in: "I use {braces} loosely. ```\n{\"verdict\":\"reject\",\"severity\":\"Major\",\"findings\":[\"Name the file.\",\"Add a test.\"]}\n```"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseVerdict(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestParseVerdictShapes(t *testing.T) {
	got, err := ParseVerdict(`{"verdict":"Approve"}`)
	if err != nil || got.Verdict != "approve" || got.Findings == nil || len(got.Findings) != 0 {
		t.Fatalf("approve: %+v %v", got, err)
	}
	got, err = ParseVerdict(`{"verdict":"reject","severity":"Critical","findings":"One thing."}`)
	if err != nil || got.Severity != "Critical" || !reflect.DeepEqual(got.Findings, []string{"One thing."}) {
		t.Fatalf("single finding: %+v %v", got, err)
	}
	got, err = ParseVerdict(`{"verdict":"reject","findings":[{"file":"a.go","issue":"x"}]}`)
	if err != nil || !reflect.DeepEqual(got.Findings, []string{`{"file":"a.go","issue":"x"}`}) {
		t.Fatalf("object finding: %+v %v", got, err)
	}
}

func TestParseVerdictFailuresQuoteTheAnswer(t *testing.T) {
	for _, tc := range []struct{ name, in, reason string }{
		{name: "prose", in: "Looks good to me!", reason: "holds no JSON verdict"},
		{name: "no verdict", in: `{"status":"DONE"}`, reason: `has no "verdict" field`},
		{name: "bad verdict", in: `{"verdict":"maybe"}`, reason: `verdict is "maybe"`},
		{name: "bad findings", in: `{"verdict":"reject","findings":42}`, reason: "findings are not usable"},
		{name: "bad severity", in: `{"verdict":"reject","severity":3}`, reason: "severity is not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseVerdict(tc.in)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), "the model answered: ") ||
				!strings.Contains(err.Error(), strings.ReplaceAll(tc.in, `"`, `\"`)) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	long := strings.Repeat("blah ", 400)
	_, err := ParseVerdict(long)
	if err == nil || !strings.Contains(err.Error(), "… (2000 characters in all)") {
		t.Fatalf("a long answer is quoted in part: %v", err)
	}
}

func TestLearning(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Always name the files a plan changes.", "Always name the files a plan changes."},
		{"  - **Learning:** Always name the files.\n  Check the handbook first.  ", "Always name the files. Check the handbook first."},
		{"<think>hmm</think>\n\"Always name the files.\"", "Always name the files."},
		{"```\nLearning: Always name the files.\n```", "Always name the files."},
		{`{"learning": "Always name the files."}`, "Always name the files."},
		{"# Learning\n1. Always name the files.", "Always name the files."},
	} {
		got, err := Learning(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Learning(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "  <think>x</think> ", "- ", strings.Repeat("word ", 200)} {
		if _, err := Learning(bad); err == nil {
			t.Errorf("Learning(%q) accepted", bad)
		}
	}
}

func TestTextAndSummary(t *testing.T) {
	got, err := Text("<think>plan it</think>\n```markdown\n# Plan: health\n1. Add it.\n```\n")
	if err != nil || got != "# Plan: health\n1. Add it." {
		t.Fatalf("Text = %q, %v", got, err)
	}
	// A fence inside the text stays.
	in := "# Plan\n```go\nx := 1\n```\nDone."
	if got, _ := Text(in); got != in {
		t.Fatalf("Text = %q", got)
	}
	if _, err := Text(" \n "); err == nil {
		t.Fatal("empty text accepted")
	}
	if got := Summary("\n\n# Plan: **add /health**\n1. x"); got != "Plan: add /health" {
		t.Errorf("Summary = %q", got)
	}
	if got := Summary("```md\n# Plan\n```"); got != "Plan" {
		t.Errorf("Summary = %q", got)
	}
	if got := Summary("\n## Plan: add /health\n1. x"); got != "Plan: add /health" {
		t.Errorf("Summary = %q", got)
	}
	if got := Summary("- **Bold first**\nrest"); got != "Bold first" {
		t.Errorf("Summary = %q", got)
	}
}

func TestObject(t *testing.T) {
	got, err := Object("Sure! {\"a\": {\"b\": [1, 2]}} and more")
	if err != nil || string(got) != `{"a": {"b": [1, 2]}}` {
		t.Fatalf("Object = %s, %v", got, err)
	}
	if _, err := Object("[1, 2]"); err == nil {
		t.Fatal("an array is no object")
	}
}
