package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseUnknownKeys(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		wantPath string
		wantLine int
		wantMsg  string // the whole FieldError.Error()
	}{
		{
			name:     "top level",
			data:     withLines(`orchestrater: {}`),
			wantPath: "orchestrater",
			wantLine: 5,
			wantMsg:  `sett.yml:5: unknown key "orchestrater" at the top level (known keys: version, instance, orchestrator, agents,`,
		},
		{
			name:     "in an agent",
			data:     withLines(`    bidding_stratgy: review`),
			wantPath: "agents.writer.bidding_stratgy",
			wantLine: 5,
			wantMsg: `sett.yml:5: unknown key "bidding_stratgy" in agents.writer (known keys: role, image, command, ` +
				`bidding_strategy, consumes,`,
		},
		{
			name:     "in the orchestrator",
			data:     withLines(`orchestrator:`, `  bid_timout: 5s`),
			wantPath: "orchestrator.bid_timout",
			wantLine: 6,
			wantMsg:  `sett.yml:6: unknown key "bid_timout" in orchestrator (known keys: max_review_iterations, bid_timeout,`,
		},
		{
			name:     "deeply nested",
			data:     withLines(`    workspace:`, `      mode: ro`, `      path: /src`),
			wantPath: "agents.writer.workspace.path",
			wantLine: 7,
			wantMsg:  `sett.yml:7: unknown key "path" in agents.writer.workspace (known keys: mode)`,
		},
		{
			name:     "in services.redis",
			data:     withLines(`services:`, `  redis:`, `    host: localhost`),
			wantPath: "services.redis.host",
			wantLine: 7,
			wantMsg:  `sett.yml:7: unknown key "host" in services.redis (known keys: image, url, password, hash_tag, username, tls, sentinel, cluster, wait_replicas, wait_timeout)`,
		},
		{
			name:     "name is not a key of an agent",
			data:     withLines(`    name: writer`),
			wantPath: "agents.writer.name",
			wantLine: 5,
			wantMsg:  `sett.yml:5: unknown key "name" in agents.writer`,
		},
		{
			name:     "a debug switch that became a daemon flag",
			data:     withLines(`orchestrator:`, `  disable_bid_grants: true`),
			wantPath: "orchestrator.disable_bid_grants",
			wantLine: 6,
			wantMsg: `sett.yml:6: key "orchestrator.disable_bid_grants" was removed from sett.yml: it is a debugging switch, ` +
				`now the orchestrator daemon's --disable-bid-grants flag (or SETT_DISABLE_BID_GRANTS=true in its environment); delete the key`,
		},
		{
			name:     "the old name of approvals.timeout",
			data:     withLines(`orchestrator:`, `  approval_timeout: 30m`),
			wantPath: "orchestrator.approval_timeout",
			wantLine: 6,
			wantMsg: `sett.yml:6: key "orchestrator.approval_timeout" was renamed approvals.timeout (the approval gate's ` +
				`other settings live in approvals too); move the value there`,
		},
		{
			name:     "the other debug switch",
			data:     withLines(`orchestrator:`, `  disable_result_completion: false`),
			wantPath: "orchestrator.disable_result_completion",
			wantLine: 6,
			wantMsg:  `sett.yml:6: key "orchestrator.disable_result_completion" was removed from sett.yml: it is a debugging switch, now the orchestrator daemon's --disable-result-completion flag`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse(tt.data, "sett.yml")
			if !errors.Is(err, ErrUnknownKey) {
				t.Fatalf("Parse error = %v, want ErrUnknownKey", err)
			}
			fe := findFieldError(t, err, tt.wantPath)
			if fe.Line != tt.wantLine {
				t.Errorf("Line = %d, want %d", fe.Line, tt.wantLine)
			}
			if !strings.HasPrefix(fe.Error(), tt.wantMsg) {
				t.Errorf("message:\n got %s\nwant %s", fe.Error(), tt.wantMsg)
			}
			if !strings.HasPrefix(err.Error(), "config: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestParseTypeErrors(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		wantPath string
		wantLine int
		wantMsg  string // the whole FieldError.Error()
	}{
		{
			name:     "duration in words",
			data:     doc(`version: "1.0"`, `orchestrator:`, `  max_review_iterations: 2`, `  bid_timeout: 5 seconds`, `agents: {writer: {}}`),
			wantPath: "orchestrator.bid_timeout",
			wantLine: 4,
			wantMsg:  `sett.yml:4: orchestrator.bid_timeout: "5 seconds" is not a duration (use Go syntax like 5s, 2m, 1h)`,
		},
		{
			name:     "duration without unit",
			data:     withLines(`    timeout: 600`),
			wantPath: "agents.writer.timeout",
			wantLine: 5,
			wantMsg:  `sett.yml:5: agents.writer.timeout: 600 is not a duration: add a unit (use Go syntax like 600s, 600m, 600h)`,
		},
		{
			name:     "integer in words",
			data:     withLines(`    max_concurrent: two`),
			wantPath: "agents.writer.max_concurrent",
			wantLine: 5,
			wantMsg:  `sett.yml:5: agents.writer.max_concurrent: "two" is not an integer`,
		},
		{
			name:     "quoted integer",
			data:     withLines(`orchestrator: {max_chain_depth: "25"}`),
			wantPath: "orchestrator.max_chain_depth",
			wantLine: 5,
			wantMsg:  `sett.yml:5: orchestrator.max_chain_depth: "25" is not an integer (write it without quotes)`,
		},
		{
			name:     "float for an integer",
			data:     withLines(`orchestrator: {max_review_iterations: 2.5}`),
			wantPath: "orchestrator.max_review_iterations",
			wantLine: 5,
			wantMsg:  `sett.yml:5: orchestrator.max_review_iterations: "2.5" is not an integer`,
		},
		{
			name:     "integer overflow",
			data:     withLines(`orchestrator: {max_workflow_artefacts: 99999999999999999999}`),
			wantPath: "orchestrator.max_workflow_artefacts",
			wantLine: 5,
			wantMsg:  `sett.yml:5: orchestrator.max_workflow_artefacts: 99999999999999999999 is out of range for an integer`,
		},
		{
			name:     "byte size with bad unit",
			data:     withLines(`    max_output_bytes: 4M`),
			wantPath: "agents.writer.max_output_bytes",
			wantLine: 5,
			wantMsg:  `sett.yml:5: agents.writer.max_output_bytes: "4M" has an ambiguous unit "M" (use MiB for powers of 1024 or MB for powers of 1000)`,
		},
		{
			name:     "string where a list belongs",
			data:     doc(`version: "1.0"`, `agents:`, `  writer:`, `    command: sett-writer --type Plan`),
			wantPath: "agents.writer.command",
			wantLine: 4,
			wantMsg:  `sett.yml:4: agents.writer.command: expected a list of strings, got "sett-writer --type Plan"`,
		},
		{
			name:     "list where a string belongs",
			data:     withLines(`    role: [a, b]`),
			wantPath: "agents.writer.role",
			wantLine: 5,
			wantMsg:  `sett.yml:5: agents.writer.role: expected a string, got a list`,
		},
		{
			name:     "mapping in a list of strings",
			data:     withLines(`    consumes: [Plan, {type: Code}]`),
			wantPath: "agents.writer.consumes[1]",
			wantLine: 5,
			wantMsg:  `sett.yml:5: agents.writer.consumes[1]: expected a string, got a mapping`,
		},
		{
			name:     "yes is not a boolean",
			data:     withLines(`    bid_on_own_outputs: yes`),
			wantPath: "agents.writer.bid_on_own_outputs",
			wantLine: 5,
			wantMsg:  `sett.yml:5: agents.writer.bid_on_own_outputs: "yes" is not a boolean (use true or false)`,
		},
		{
			name:     "cpus in words",
			data:     withLines(`    resources: {cpus: half}`),
			wantPath: "agents.writer.resources.cpus",
			wantLine: 5,
			wantMsg:  `sett.yml:5: agents.writer.resources.cpus: "half" is not a number`,
		},
		{
			name:     "agents as a list",
			data:     doc(`version: "1.0"`, `agents:`, `  - writer`),
			wantPath: "agents",
			wantLine: 3,
			wantMsg:  `sett.yml:3: agents: expected a mapping, got a list`,
		},
		{
			name:     "agent as a string",
			data:     doc(`version: "1.0"`, `agents:`, `  writer: sett-writer`),
			wantPath: "agents.writer",
			wantLine: 3,
			wantMsg:  `sett.yml:3: agents.writer: expected a mapping of keys, got "sett-writer"`,
		},
		{
			name:     "environment value as a list",
			data:     withLines(`    environment:`, `      LOG_LEVEL: [debug]`),
			wantPath: "agents.writer.environment.LOG_LEVEL",
			wantLine: 6,
			wantMsg:  `sett.yml:6: agents.writer.environment.LOG_LEVEL: expected a string, got a list`,
		},
		{
			name:     "duplicate key",
			data:     withLines(`    timeout: 5m`, `    timeout: 10m`),
			wantPath: "agents.writer.timeout",
			wantLine: 6,
			wantMsg:  `sett.yml:6: agents.writer.timeout: key "timeout" appears twice (first at line 5)`,
		},
		{
			name:     "duplicate agent",
			data:     withLines(`  writer:`, `    role: other`),
			wantPath: "agents.writer",
			wantLine: 5,
			wantMsg:  `sett.yml:5: agents.writer: key "writer" appears twice (first at line 3)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse(tt.data, "sett.yml")
			if !errors.Is(err, ErrType) {
				t.Fatalf("Parse error = %v, want ErrType", err)
			}
			fe := findFieldError(t, err, tt.wantPath)
			if fe.Line != tt.wantLine {
				t.Errorf("Line = %d, want %d", fe.Line, tt.wantLine)
			}
			if fe.Error() != tt.wantMsg {
				t.Errorf("message:\n got %s\nwant %s", fe.Error(), tt.wantMsg)
			}
		})
	}
}

func TestParseDocumentErrors(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr error
		wantMsg string
	}{
		{name: "empty", data: "", wantErr: ErrEmpty, wantMsg: "config: file is empty: sett.yml has no settings (start from sett.yml.example)"},
		{name: "whitespace", data: "  \n\n", wantErr: ErrEmpty, wantMsg: "config: file is empty"},
		{name: "only comments", data: "# nothing yet\n", wantErr: ErrEmpty, wantMsg: "config: file is empty"},
		{name: "only a document marker", data: "---\n", wantErr: ErrEmpty, wantMsg: "config: file is empty"},
		{
			name:    "two documents",
			data:    "version: \"1.0\"\nagents: {writer: {}}\n---\nversion: \"1.0\"\n",
			wantErr: ErrMultipleDocuments,
			wantMsg: `config: more than one YAML document: sett.yml:3: a second document starts here`,
		},
		{name: "syntax error", data: "version: \"1.0\"\nagents: [\n", wantErr: ErrSyntax, wantMsg: "config: invalid YAML: sett.yml:"},
		{name: "tab indentation", data: "version: \"1.0\"\nagents:\n\twriter: {}\n", wantErr: ErrSyntax, wantMsg: "config: invalid YAML: sett.yml:3: found character that cannot start any token"},
		{name: "top level list", data: "- version\n", wantErr: ErrType, wantMsg: `config: sett.yml:1: the top level must be a mapping of keys (version, agents, ...), got a list`},
		{name: "top level scalar", data: "hello\n", wantErr: ErrType, wantMsg: `config: sett.yml:1: the top level must be a mapping of keys (version, agents, ...), got "hello"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Parse([]byte(tt.data), "sett.yml")
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Parse error = %v, want %v", err, tt.wantErr)
			}
			if cfg != nil {
				t.Errorf("Parse returned a Config with an error")
			}
			if !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("message:\n got %s\nwant %s...", err, tt.wantMsg)
			}
		})
	}
}

func TestParseReportsEveryStructuralProblem(t *testing.T) {
	data := doc(
		`version: "1.0"`,
		`colour: blue`, // 2: unknown
		`orchestrator:`,
		`  bid_timeout: soon`, // 4: type
		`agents:`,
		`  writer:`,
		`    comand: [w]`,          // 7: unknown
		`    max_concurrent: lots`, // 8: type
	)
	_, _, err := Parse(data, "sett.yml")
	got := fieldErrors(t, err)
	want := []struct {
		line int
		err  error
	}{{2, ErrUnknownKey}, {4, ErrType}, {7, ErrUnknownKey}, {8, ErrType}}
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(got), len(want), err)
	}
	for i, w := range want {
		if got[i].Line != w.line || !errors.Is(got[i], w.err) {
			t.Errorf("error %d = %v (line %d), want line %d matching %v", i, got[i], got[i].Line, w.line, w.err)
		}
	}
	if !strings.HasPrefix(err.Error(), "config: 4 problems:\n  sett.yml:2: ") {
		t.Errorf("message does not list the problems under a count:\n%s", err)
	}
}

func TestMaxReviewIterations(t *testing.T) {
	tests := []struct {
		name         string
		data         []byte
		want         int
		wantWarning  string // substring of the only warning; "" means none
		wantErrMsg   string // substring of the error; "" means success
		wantErrLines []int
	}{
		{name: "section missing", data: withLines(), want: 3},
		{name: "section empty", data: withLines(`orchestrator:`), want: 3},
		{name: "key missing", data: withLines(`orchestrator:`, `  bid_timeout: 2s`), want: 3},
		{name: "null", data: withLines(`orchestrator:`, `  max_review_iterations: ~`), want: 3},
		{name: "explicit value", data: withLines(`orchestrator:`, `  max_review_iterations: 7`), want: 7},
		{
			name:        "explicit zero stays zero with a warning",
			data:        withLines(`orchestrator:`, `  max_review_iterations: 0`),
			want:        0,
			wantWarning: "sett.yml:6: orchestrator.max_review_iterations: 0 means unlimited",
		},
		{
			name:         "negative",
			data:         withLines(`orchestrator:`, `  max_review_iterations: -1`),
			wantErrMsg:   "sett.yml:6: orchestrator.max_review_iterations: -1 is not valid (use a positive number, or 0 for unlimited)",
			wantErrLines: []int{6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings, err := Parse(tt.data, "sett.yml")
			if tt.wantErrMsg != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErrMsg) {
					t.Fatalf("Parse error = %v, want ErrInvalid containing %q", err, tt.wantErrMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := cfg.Orchestrator.ReviewIterationLimit(); got != tt.want {
				t.Errorf("ReviewIterationLimit() = %d, want %d", got, tt.want)
			}
			if tt.wantWarning == "" {
				if len(warnings) != 0 {
					t.Errorf("warnings = %q, want none", warnings)
				}
				return
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], tt.wantWarning) {
				t.Errorf("warnings = %q, want one containing %q", warnings, tt.wantWarning)
			}
		})
	}
}

func TestParseAppliesDefaults(t *testing.T) {
	cfg, warnings := mustParse(t, withLines())
	if len(warnings) != 0 {
		t.Errorf("warnings = %q, want none", warnings)
	}
	o := cfg.Orchestrator
	checks := []struct {
		name      string
		got, want any
	}{
		{"orchestrator.max_review_iterations", o.ReviewIterationLimit(), 3},
		{"orchestrator.bid_timeout", o.BidTimeout.Std(), 5 * time.Second},
		{"orchestrator.lease_ttl", o.LeaseTTL.Std(), 30 * time.Second},
		{"orchestrator.max_grant_attempts", o.MaxGrantAttempts, 2},
		{"orchestrator.max_workflow_artefacts", o.MaxWorkflowArtefacts, 500},
		{"orchestrator.max_chain_depth", o.MaxChainDepth, 25},
		{"orchestrator.max_payload_bytes", o.MaxPayloadBytes, MiB},
		{"orchestrator.agent_heartbeat_ttl", o.AgentHeartbeatTTL.Std(), 10 * time.Second},
		{"orchestrator.decide_rule_bids", o.DecideRuleBids, true},
		{"orchestrator.http_addr", o.HTTPAddr, ":8080"},
		{"services.redis.image", cfg.Services.Redis.Image, "sett-redis:local"},
		{"services.redis.url", cfg.Services.Redis.URL, ""},
		{"services.redis.hash_tag", cfg.Services.Redis.HashTag, false},
		{"instance", cfg.Instance, ""},
	}
	a, ok := cfg.Agent("writer")
	if !ok {
		t.Fatal(`Agent("writer") not found`)
	}
	checks = append(checks, []struct {
		name      string
		got, want any
	}{
		{"name", a.Name, "writer"},
		{"role", a.Role, "writer"},
		{"image", a.Image, ""},
		{"bidding_strategy", a.BiddingStrategy, BidExclusive},
		{"consumes", len(a.Consumes), 0},
		{"bid_on_own_outputs", a.BidOnOwnOutputs, false},
		{"bid_script_timeout", a.BidScriptTimeout.Std(), 5 * time.Second},
		{"workspace.mode", a.Workspace.Mode, WorkspaceReadOnly},
		{"timeout", a.Timeout.Std(), 10 * time.Minute},
		{"max_concurrent", a.MaxConcurrent, 1},
		{"max_output_bytes", a.MaxOutputBytes, 4 * MiB},
		{"resources.cpus", a.Resources.CPUs, 0.0},
		{"resources.memory", a.Resources.Memory, ByteSize(0)},
	}...)
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestParseKeepsExplicitZeros(t *testing.T) {
	// A zero written in the file is judged by Validate, not replaced by the
	// default: "timeout: 0s" is a mistake to report, not to paper over.
	data := withLines(
		`    timeout: 0s`,
		`    max_concurrent: 0`,
		`orchestrator:`,
		`  max_grant_attempts: 0`,
	)
	_, _, err := Parse(data, "sett.yml")
	for _, path := range []string{"agents.writer.timeout", "agents.writer.max_concurrent", "orchestrator.max_grant_attempts"} {
		fe := findFieldError(t, err, path)
		if !errors.Is(fe, ErrInvalid) {
			t.Errorf("%s: %v does not match ErrInvalid", path, fe)
		}
	}
}

// TestParseKeepsExplicitFalse: decide_rule_bids defaults to true, and a
// file that writes false keeps every live consumer asked.
func TestParseKeepsExplicitFalse(t *testing.T) {
	cfg, _ := mustParse(t, withLines(`orchestrator:`, `  decide_rule_bids: false`))
	if cfg.Orchestrator.DecideRuleBids {
		t.Fatal("orchestrator.decide_rule_bids = true, want the false the file wrote")
	}
}

func TestParseValues(t *testing.T) {
	data := doc(
		`version: "1.0"`,
		`instance: demo-1`,
		`orchestrator:`,
		`  bid_timeout: 1500ms`,
		`  max_payload_bytes: 2097152`,
		`  http_addr: "127.0.0.1:9090"`,
		`agents:`,
		`  reviewer:`,
		`    role: critic`,
		`    image: example/reviewer:1`,
		`    command: ["sett-reviewer", "--strict", ""]`,
		`    bidding_strategy: review`,
		`    consumes: ["Plan", "Code*"]`,
		`    bid_on_own_outputs: true`,
		`    bid_script: [/bin/decide]`,
		`    bid_script_timeout: 2s`,
		`    workspace: {mode: rw}`,
		`    environment: {LOG_LEVEL: debug, _X: "1"}`,
		`    timeout: 1h30m`,
		`    max_concurrent: 3`,
		`    max_output_bytes: 512KiB`,
		`    resources: {cpus: 0.5, memory: 1GiB}`,
		`services:`,
		`  redis:`,
		`    url: rediss://user:secret@redis.example:6380/2`,
		`    password: hunter2`,
		`    hash_tag: true`,
	)
	cfg, _ := mustParse(t, data)
	a, _ := cfg.Agent("reviewer")
	checks := []struct {
		name      string
		got, want any
	}{
		{"instance", cfg.Instance, "demo-1"},
		{"bid_timeout", cfg.Orchestrator.BidTimeout.Std(), 1500 * time.Millisecond},
		{"max_payload_bytes", cfg.Orchestrator.MaxPayloadBytes, 2 * MiB},
		{"http_addr", cfg.Orchestrator.HTTPAddr, "127.0.0.1:9090"},
		{"role", a.Role, "critic"},
		{"image", a.Image, "example/reviewer:1"},
		{"command", strings.Join(a.Command, "|"), "sett-reviewer|--strict|"},
		{"bidding_strategy", a.BiddingStrategy, BidReview},
		{"consumes", strings.Join(a.Consumes, "|"), "Plan|Code*"},
		{"bid_on_own_outputs", a.BidOnOwnOutputs, true},
		{"bid_script", strings.Join(a.BidScript, "|"), "/bin/decide"},
		{"bid_script_timeout", a.BidScriptTimeout.Std(), 2 * time.Second},
		{"workspace.mode", a.Workspace.Mode, WorkspaceReadWrite},
		{"environment", a.Environment["LOG_LEVEL"] + a.Environment["_X"], "debug1"},
		{"timeout", a.Timeout.Std(), 90 * time.Minute},
		{"max_concurrent", a.MaxConcurrent, 3},
		{"max_output_bytes", a.MaxOutputBytes, 512 * KiB},
		{"cpus", a.Resources.CPUs, 0.5},
		{"memory", a.Resources.Memory, GiB},
		{"url", cfg.Services.Redis.URL, "rediss://user:secret@redis.example:6380/2"},
		{"password", cfg.Services.Redis.Password, "hunter2"},
		{"hash_tag", cfg.Services.Redis.HashTag, true},
		{"redis image default", cfg.Services.Redis.Image, DefaultRedisImage},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestParseAnchorsAndMerges(t *testing.T) {
	data := doc(
		`version: "1.0"`,
		`x-writer: &writer`, // unknown top-level key: anchors need a home
		`  image: sett-example-writer:local`,
		`agents:`,
		`  planner:`,
		`    <<: *writer`,
		`    command: [sett-writer]`,
	)
	_, _, err := Parse(data, "sett.yml")
	if !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Parse error = %v, want ErrUnknownKey for x-writer", err)
	}

	data = doc(
		`version: "1.0"`,
		`agents:`,
		`  planner: &writer`,
		`    image: sett-example-writer:local`,
		`    timeout: 5m`,
		`  coder:`,
		`    <<: *writer`,
		`    timeout: 20m`,
	)
	cfg, _ := mustParse(t, data)
	coder, _ := cfg.Agent("coder")
	if coder.Image != "sett-example-writer:local" || coder.Timeout.Std() != 20*time.Minute {
		t.Errorf("coder = image %q, timeout %v; want the merged image and its own timeout", coder.Image, coder.Timeout)
	}

	data = doc(
		`version: "1.0"`,
		`agents:`,
		`  planner: &writer`,
		`    image: sett-example-writer:local`,
		`  coder:`,
		`    <<: *writer`,
		`    imagee: typo`,
	)
	_, _, err = Parse(data, "sett.yml")
	if fe := findFieldError(t, err, "agents.coder.imagee"); fe.Line != 7 {
		t.Errorf("unknown key next to a merge: line %d, want 7", fe.Line)
	}
}

func TestParseFilename(t *testing.T) {
	tests := []struct {
		name     string
		filename string
		want     string
	}{
		{name: "given", filename: "deploy/prod.yml", want: "config: deploy/prod.yml:2: "},
		{name: "default", filename: "", want: "config: sett.yml:2: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse(doc(`version: "1.0"`, `bogus: 1`), tt.filename)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "sett.yml")
	if err := os.WriteFile(good, withLines(), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, withLines(`    workspace_mode: rw`), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		path    string
		wantErr error
		wantMsg string
	}{
		{name: "valid", path: good},
		{name: "missing", path: filepath.Join(dir, "nope.yml"), wantErr: fs.ErrNotExist, wantMsg: "config: open "},
		{name: "invalid names the path", path: bad, wantErr: ErrUnknownKey, wantMsg: "config: " + bad + ":5: unknown key \"workspace_mode\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Load(tt.path)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if got := cfg.AgentNames(); len(got) != 1 || got[0] != "writer" {
					t.Fatalf("AgentNames() = %v, want [writer]", got)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Fatalf("Load error = %v, want %v with prefix %q", err, tt.wantErr, tt.wantMsg)
			}
		})
	}
}
