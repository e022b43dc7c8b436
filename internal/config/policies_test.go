package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/priority"
	"github.com/settdev/sett/internal/reviewpolicy"
)

// Tests of the review policy, review roles, retries, priority scores and
// escalation hook: their defaults, their values and every validation rule.

func TestPolicyDefaults(t *testing.T) {
	cfg, warnings := mustParse(t, withLines())
	if len(warnings) != 0 {
		t.Fatalf("warnings = %q", warnings)
	}
	a, _ := cfg.Agent("writer")
	checks := []struct {
		name      string
		got, want any
	}{
		{"review_policy", cfg.Orchestrator.ReviewPolicy.Policy(), reviewpolicy.DefaultPolicy()},
		{"agent review", a.Review.Role(), reviewpolicy.Role{}},
		{"retry.max_attempts unset", a.Retry.MaxAttempts == nil, true},
		{"retry attempts", a.Retry.Policy(false).MaxAttempts, 5},
		{"retry attempts of a review grant", a.Retry.Policy(true).MaxAttempts, 2},
		{"retry backoff", a.Retry.Policy(false).Backoff, []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 4 * time.Hour}},
		{"retry permanent_exit_codes", len(a.Retry.Policy(false).PermanentExitCodes), 0},
		{"priority weights", cfg.Orchestrator.Priority.ScoreWeights(), priority.DefaultWeights()},
		{"escalation command", len(cfg.Escalation.Command), 0},
		{"escalation timeout", cfg.Escalation.Timeout, DefaultEscalationTimeout},
		{"escalation hook timeout", cfg.Escalation.Hook().Timeout, 10 * time.Second},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Fatalf("got %#v, want %#v", c.got, c.want)
			}
		})
	}
}

func TestPolicyValues(t *testing.T) {
	cfg, _ := mustParse(t, doc(
		`version: "1.0"`,
		`orchestrator:`,
		`  review_policy:`,
		`    severities: [Critical, High, Medium, Low]`,
		`    rework_at: High`,
		`    fail_at: critical`,
		`    min_reviews: 0`,
		`    max_missing: 1`,
		`    severity_required: true`,
		`    rework_on_reject: true`,
		`  priority:`,
		`    weights: {high: 0, medium: 2, low: -1, deadline_2h: 50, deadline_1d: 40, deadline_1w: 30, important_sender: 7}`,
		`    important_senders: [ceo@company.com, "@legal.company.com"]`,
		`agents:`,
		`  security:`,
		`    bidding_strategy: review`,
		`    review: {blocking: true, required: true}`,
		`    retry: {max_attempts: 4, backoff: [10ms, 20ms], permanent_exit_codes: [2, 64]}`,
		`  knowledge:`,
		`    bidding_strategy: review`,
		`    review: {advisory: true}`,
		`escalation:`,
		`  command: [notify, --channel, ops]`,
		`  timeout: 3s`,
	))
	one := 1
	sec, _ := cfg.Agent("security")
	know, _ := cfg.Agent("knowledge")
	checks := []struct {
		name      string
		got, want any
	}{
		{"review_policy", cfg.Orchestrator.ReviewPolicy.Policy(), reviewpolicy.Policy{
			Severities: []string{"Critical", "High", "Medium", "Low"}, ReworkAt: "High", FailAt: "critical",
			MinReviews: 0, MaxMissing: &one, SeverityRequired: true, ReworkOnReject: true}},
		{"security role", sec.Review.Role(), reviewpolicy.Role{Blocking: true, Required: true}},
		{"knowledge role", know.Review.Role(), reviewpolicy.Role{Advisory: true}},
		{"explicit attempts hold for review grants", sec.Retry.Policy(true).MaxAttempts, 4},
		{"backoff", sec.Retry.Policy(true).Backoff, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}},
		{"permanent exit codes", sec.Retry.Policy(false).PermanentExitCodes, []int{2, 64}},
		{"reviewer without retry settings", know.Retry.Policy(true).MaxAttempts, 2},
		{"weights, explicit zero kept", cfg.Orchestrator.Priority.ScoreWeights(), priority.Weights{
			High: 0, Medium: 2, Low: -1, Deadline2h: 50, Deadline1d: 40, Deadline1w: 30, ImportantSender: 7,
			ImportantSenders: []string{"ceo@company.com", "@legal.company.com"}}},
		{"escalation", []any{cfg.Escalation.Hook().Command, cfg.Escalation.Hook().Timeout}, []any{[]string{"notify", "--channel", "ops"}, 3 * time.Second}},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Fatalf("got %#v, want %#v", c.got, c.want)
			}
		})
	}
	// The conversions copy: changing the result leaves the Config alone.
	p := cfg.Orchestrator.ReviewPolicy.Policy()
	p.Severities[0], *p.MaxMissing = "x", 9
	if cfg.Orchestrator.ReviewPolicy.Severities[0] != "Critical" || *cfg.Orchestrator.ReviewPolicy.MaxMissing != 1 {
		t.Fatal("Policy() shares its slices or pointers with the Config")
	}
}

func TestPolicyValidation(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		wantPath string
		wantLine int
		wantMsg  string
	}{
		// orchestrator.review_policy
		{name: "severities empty", data: withLines(`orchestrator:`, `  review_policy: {severities: []}`), wantPath: "orchestrator.review_policy.severities", wantLine: 6,
			wantMsg: "is empty; list the severities worst first, or leave it out for Blocker, Major, Minor"},
		{name: "severity repeated", data: withLines(`orchestrator:`, `  review_policy:`, `    severities:`, `      - Blocker`, `      - Major`, `      - MAJOR`), wantPath: "orchestrator.review_policy.severities[2]", wantLine: 10,
			wantMsg: `"MAJOR" repeats severities[1] (names compare case-insensitively)`},
		{name: "severity empty name", data: withLines(`orchestrator: {review_policy: {severities: [Blocker, Major, ""]}}`), wantPath: "orchestrator.review_policy.severities[2]", wantLine: 5,
			wantMsg: "an empty severity name is not allowed"},
		{name: "rework_at unknown", data: withLines(`orchestrator:`, `  review_policy:`, `    rework_at: High`), wantPath: "orchestrator.review_policy.rework_at", wantLine: 7,
			wantMsg: `"High" is not one of the severities [Blocker, Major, Minor]; set rework_at to one of them`},
		{name: "fail_at unknown", data: withLines(`orchestrator: {review_policy: {fail_at: Critical}}`), wantPath: "orchestrator.review_policy.fail_at", wantLine: 5,
			wantMsg: `"Critical" is not one of the severities`},
		{name: "fail_at below rework_at", data: withLines(`orchestrator: {review_policy: {rework_at: Blocker, fail_at: Major}}`), wantPath: "orchestrator.review_policy.fail_at", wantLine: 5,
			wantMsg: "Major is less severe than rework_at Blocker; fail_at must be at or above rework_at"},
		{name: "min_reviews negative", data: withLines(`orchestrator: {review_policy: {min_reviews: -1}}`), wantPath: "orchestrator.review_policy.min_reviews", wantLine: 5,
			wantMsg: "-1 is not valid (use 0 for no minimum, or a positive number)"},
		{name: "max_missing negative", data: withLines(`orchestrator: {review_policy: {max_missing: -2}}`), wantPath: "orchestrator.review_policy.max_missing", wantLine: 5,
			wantMsg: "-2 is not valid"},

		// agents.<name>.review
		{name: "advisory and required", data: withLines(`    review:`, `      required: true`, `      advisory: true`), wantPath: "agents.writer.review.advisory", wantLine: 7,
			wantMsg: "an advisory reviewer never decides, so it cannot also be required or blocking"},
		{name: "advisory and blocking", data: withLines(`    review: {blocking: true, advisory: true}`), wantPath: "agents.writer.review.advisory", wantLine: 5,
			wantMsg: "cannot also be required or blocking"},

		// agents.<name>.retry
		{name: "max_attempts zero", data: withLines(`    retry: {max_attempts: 0}`), wantPath: "agents.writer.retry.max_attempts", wantLine: 5,
			wantMsg: "0 is not valid (must be between 1 and 100; 1 means no retry)"},
		{name: "max_attempts too many", data: withLines(`    retry: {max_attempts: 101}`), wantPath: "agents.writer.retry.max_attempts", wantLine: 5, wantMsg: "101 is not valid"},
		{name: "backoff empty", data: withLines(`    retry:`, `      backoff: []`), wantPath: "agents.writer.retry.backoff", wantLine: 6,
			wantMsg: "is empty; list at least one delay (like [1m, 5m]), or leave it out for the default 1m, 5m, 15m, 1h, 4h"},
		{name: "backoff zero delay", data: withLines(`    retry:`, `      backoff:`, `        - 1m`, `        - 0s`), wantPath: "agents.writer.retry.backoff[1]", wantLine: 8,
			wantMsg: "0s is not valid (must be greater than 0"},
		{name: "exit code zero", data: withLines(`    retry: {permanent_exit_codes: [0]}`), wantPath: "agents.writer.retry.permanent_exit_codes[0]", wantLine: 5,
			wantMsg: "0 is not an exit code that means failure (use 1 to 255)"},
		{name: "exit code too large", data: withLines(`    retry: {permanent_exit_codes: [2, 256]}`), wantPath: "agents.writer.retry.permanent_exit_codes[1]", wantLine: 5, wantMsg: "256 is not an exit code"},

		// orchestrator.priority
		{name: "weight out of range", data: withLines(`orchestrator:`, `  priority:`, `    weights:`, `      deadline_2h: 2000000`), wantPath: "orchestrator.priority.weights.deadline_2h", wantLine: 8,
			wantMsg: "2000000 is out of range (must be between -1000000 and 1000000)"},
		{name: "important sender without @", data: withLines(`orchestrator: {priority: {important_senders: [company.com]}}`), wantPath: "orchestrator.priority.important_senders[0]", wantLine: 5,
			wantMsg: `"company.com": not an address (use an address like ceo@company.com, or @company.com for a whole domain)`},
		{name: "important sender with a name", data: withLines(`orchestrator: {priority: {important_senders: [ok@x.com, "CEO <ceo@x.com>"]}}`), wantPath: "orchestrator.priority.important_senders[1]", wantLine: 5,
			wantMsg: "not a plain address"},

		// escalation
		{name: "escalation empty program", data: withLines(`escalation: {command: ["", "x"]}`), wantPath: "escalation.command[0]", wantLine: 5, wantMsg: "the program to run must not be empty"},
		{name: "escalation timeout zero", data: withLines(`escalation:`, `  command: [notify]`, `  timeout: 0s`), wantPath: "escalation.timeout", wantLine: 7, wantMsg: "0s is not valid (must be greater than 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Parse(tt.data, "sett.yml")
			if err == nil {
				t.Fatalf("Parse accepted:\n%s\n%+v", tt.data, cfg)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse error = %v, want ErrInvalid", err)
			}
			fe := findFieldError(t, err, tt.wantPath)
			if fe.Line != tt.wantLine {
				t.Errorf("Line = %d, want %d (%v)", fe.Line, tt.wantLine, fe)
			}
			if !strings.Contains(fe.Error(), tt.wantMsg) {
				t.Errorf("message:\n got %s\nwant it to contain %s", fe.Error(), tt.wantMsg)
			}
			if n := len(fieldErrors(t, err)); n != 1 {
				t.Errorf("got %d errors, want only the one under test:\n%v", n, err)
			}
		})
	}
}

func TestPolicyCustomTaxonomyNeedsItsThresholds(t *testing.T) {
	_, _, err := Parse(withLines(`orchestrator: {review_policy: {severities: [Critical, High]}}`), "sett.yml")
	for _, path := range []string{"orchestrator.review_policy.rework_at", "orchestrator.review_policy.fail_at"} {
		fe := findFieldError(t, err, path)
		if !strings.Contains(fe.Error(), "is not one of the severities [Critical, High]") {
			t.Errorf("%s: %v", path, fe)
		}
	}
}

func TestPolicyStructuralErrors(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		wantPath string
		wantErr  error
		wantMsg  string
	}{
		{name: "unknown review_policy key", data: withLines(`orchestrator: {review_policy: {rework_on: Major}}`), wantPath: "orchestrator.review_policy.rework_on", wantErr: ErrUnknownKey,
			wantMsg: `unknown key "rework_on" in orchestrator.review_policy (known keys: severities, rework_at, fail_at, min_reviews, max_missing, severity_required, rework_on_reject)`},
		{name: "unknown review key", data: withLines(`    review: {optional: true}`), wantPath: "agents.writer.review.optional", wantErr: ErrUnknownKey,
			wantMsg: "(known keys: blocking, required, advisory, deadline)"},
		{name: "unknown retry key", data: withLines(`    retry: {attempts: 3}`), wantPath: "agents.writer.retry.attempts", wantErr: ErrUnknownKey,
			wantMsg: "(known keys: max_attempts, backoff, permanent_exit_codes)"},
		{name: "unknown weight", data: withLines(`orchestrator: {priority: {weights: {urgent: 3}}}`), wantPath: "orchestrator.priority.weights.urgent", wantErr: ErrUnknownKey,
			wantMsg: "(known keys: high, medium, low, deadline_2h, deadline_1d, deadline_1w, important_sender)"},
		{name: "unknown escalation key", data: withLines(`escalation: {cmd: [x]}`), wantPath: "escalation.cmd", wantErr: ErrUnknownKey, wantMsg: "(known keys: command, timeout)"},
		{name: "backoff without unit", data: withLines(`    retry: {backoff: [60]}`), wantPath: "agents.writer.retry.backoff[0]", wantErr: ErrType, wantMsg: "60 is not a duration: add a unit"},
		{name: "max_missing not a number", data: withLines(`orchestrator: {review_policy: {max_missing: one}}`), wantPath: "orchestrator.review_policy.max_missing", wantErr: ErrType, wantMsg: `"one" is not an integer`},
		{name: "severities a string", data: withLines(`orchestrator: {review_policy: {severities: Blocker}}`), wantPath: "orchestrator.review_policy.severities", wantErr: ErrType, wantMsg: "expected a list of strings"},
		{name: "deadline without advisory", data: withLines(`    review: {deadline: 30s}`), wantPath: "agents.writer.review.deadline", wantErr: ErrInvalid,
			wantMsg: "only an advisory reviewer has a deadline of its own"},
		{name: "negative deadline", data: withLines(`    review: {advisory: true, deadline: -5s}`), wantPath: "agents.writer.review.deadline", wantErr: ErrInvalid,
			wantMsg: "is negative; give a duration such as 30s"},
		{name: "blocking not a boolean", data: withLines(`    review: {blocking: yes}`), wantPath: "agents.writer.review.blocking", wantErr: ErrType, wantMsg: `"yes" is not a boolean`},
		{name: "escalation command a string", data: withLines(`escalation: {command: "notify --all"}`), wantPath: "escalation.command", wantErr: ErrType, wantMsg: "expected a list of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse(tt.data, "sett.yml")
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Parse error = %v, want %v", err, tt.wantErr)
			}
			fe := findFieldError(t, err, tt.wantPath)
			if !strings.Contains(fe.Error(), tt.wantMsg) {
				t.Errorf("message:\n got %s\nwant it to contain %s", fe.Error(), tt.wantMsg)
			}
		})
	}
}

func TestPolicyWarnings(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{
			name: "every reviewer advisory",
			data: doc(`version: "1.0"`, `agents:`, `  a: {bidding_strategy: review, review: {advisory: true}}`, `  b: {bidding_strategy: review, review: {advisory: true}}`, `  w: {}`),
			want: []string{"sett.yml: orchestrator.review_policy.min_reviews: every reviewer (a, b) is advisory and advisory reviews never count toward min_reviews 1, so every review phase fails; add a non-advisory reviewer or set min_reviews: 0"},
		},
		{
			name: "every reviewer advisory, no minimum",
			data: doc(`version: "1.0"`, `orchestrator: {review_policy: {min_reviews: 0}}`, `agents:`, `  a: {bidding_strategy: review, review: {advisory: true}}`),
		},
		{
			name: "one ordinary reviewer",
			data: doc(`version: "1.0"`, `agents:`, `  a: {bidding_strategy: review, review: {advisory: true}}`, `  b: {bidding_strategy: review}`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := mustParse(t, tt.data)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("warnings:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPolicyDefaultsInCode(t *testing.T) {
	cfg := Default()
	cfg.Agents["w"] = AgentConfig{Retry: RetryConfig{PermanentExitCodes: []int{3}}}
	cfg.ApplyDefaults()
	first := cfg.Agents["w"].Retry.Policy(true)
	cfg.ApplyDefaults()
	if again := cfg.Agents["w"].Retry.Policy(true); !reflect.DeepEqual(first, again) || first.MaxAttempts != 2 || len(first.Backoff) != 5 {
		t.Fatalf("ApplyDefaults twice: %+v then %+v", first, again)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got := cfg.Orchestrator.ReviewPolicy.Policy(); !reflect.DeepEqual(got, reviewpolicy.DefaultPolicy()) {
		t.Fatalf("review policy = %+v", got)
	}
}
