package config

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateRules(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		wantPath string
		wantLine int
		wantMsg  string // substring of FieldError.Error()
	}{
		// version and instance
		{name: "version missing", data: doc(`agents: {writer: {}}`), wantPath: "version", wantLine: 0, wantMsg: `sett.yml: version: required (write version: "1.0")`},
		{name: "version unsupported", data: doc(`version: "2.0"`, `agents: {writer: {}}`), wantPath: "version", wantLine: 1, wantMsg: `version: "2.0" is not supported (only "1.0" is)`},
		{name: "version as a number", data: doc(`version: 1`, `agents: {writer: {}}`), wantPath: "version", wantLine: 1, wantMsg: `"1" is not supported`},
		{name: "instance upper case", data: withLines(`instance: Prod`), wantPath: "instance", wantLine: 5, wantMsg: `"Prod" is not a valid instance name`},
		{name: "instance trailing dash", data: withLines(`instance: prod-`), wantPath: "instance", wantLine: 5, wantMsg: "not a valid instance name"},
		{name: "instance too long", data: withLines(`instance: ` + strings.Repeat("a", 64)), wantPath: "instance", wantLine: 5, wantMsg: "at most 63 characters"},

		// orchestrator
		{name: "bid_timeout zero", data: withLines(`orchestrator: {bid_timeout: 0s}`), wantPath: "orchestrator.bid_timeout", wantLine: 5, wantMsg: "0s is not valid (must be greater than 0"},
		{name: "bid_timeout negative", data: withLines(`orchestrator: {bid_timeout: -1s}`), wantPath: "orchestrator.bid_timeout", wantLine: 5, wantMsg: "-1s is not valid"},
		{name: "lease_ttl too short", data: withLines(`orchestrator: {lease_ttl: 999ms}`), wantPath: "orchestrator.lease_ttl", wantLine: 5, wantMsg: "999ms is too short (must be at least 1s)"},
		{name: "max_grant_attempts zero", data: withLines(`orchestrator: {max_grant_attempts: 0}`), wantPath: "orchestrator.max_grant_attempts", wantLine: 5, wantMsg: "0 is not valid (must be at least 1)"},
		{name: "max_workflow_artefacts negative", data: withLines(`orchestrator: {max_workflow_artefacts: -5}`), wantPath: "orchestrator.max_workflow_artefacts", wantLine: 5, wantMsg: "-5 is not valid (must be at least 1)"},
		{name: "max_chain_depth zero", data: withLines(`orchestrator: {max_chain_depth: 0}`), wantPath: "orchestrator.max_chain_depth", wantLine: 5, wantMsg: "must be at least 1"},
		{name: "max_payload_bytes too small", data: withLines(`orchestrator: {max_payload_bytes: 1023}`), wantPath: "orchestrator.max_payload_bytes", wantLine: 5, wantMsg: "1023B is out of range (must be between 1KiB and 64MiB)"},
		{name: "max_payload_bytes too large", data: withLines(`orchestrator: {max_payload_bytes: 65MiB}`), wantPath: "orchestrator.max_payload_bytes", wantLine: 5, wantMsg: "65MiB is out of range"},
		{name: "agent_heartbeat_ttl too short", data: withLines(`orchestrator: {agent_heartbeat_ttl: 500ms}`), wantPath: "orchestrator.agent_heartbeat_ttl", wantLine: 5, wantMsg: "500ms is too short (must be at least 1s)"},
		{name: "http_addr without port", data: withLines(`orchestrator: {http_addr: localhost}`), wantPath: "orchestrator.http_addr", wantLine: 5, wantMsg: `"localhost" is not a listen address`},
		{name: "http_addr port out of range", data: withLines(`orchestrator: {http_addr: ":70000"}`), wantPath: "orchestrator.http_addr", wantLine: 5, wantMsg: `":70000" is not a listen address`},

		// agents
		{name: "no agents key", data: doc(`version: "1.0"`), wantPath: "agents", wantLine: 0, wantMsg: "at least one agent is required"},
		{name: "empty agents", data: doc(`version: "1.0"`, `agents: {}`), wantPath: "agents", wantLine: 2, wantMsg: "at least one agent is required"},
		{name: "agent name upper case", data: doc(`version: "1.0"`, `agents:`, `  Writer: {}`), wantPath: "agents.Writer", wantLine: 3, wantMsg: `"Writer" is not a valid agent name`},
		{name: "agent name with a dot", data: doc(`version: "1.0"`, `agents:`, `  a.b: {}`), wantPath: "agents.a.b", wantLine: 3, wantMsg: `"a.b" is not a valid agent name`},
		{name: "agent name too long", data: doc(`version: "1.0"`, `agents:`, `  `+strings.Repeat("a", 64)+`: {}`), wantPath: "agents." + strings.Repeat("a", 64), wantLine: 3, wantMsg: "at most 63 characters"},
		{name: "role with spaces around", data: withLines(`    role: " coder"`), wantPath: "agents.writer.role", wantLine: 5, wantMsg: "leading or trailing spaces"},
		{name: "image with a space", data: withLines(`    image: "my image"`), wantPath: "agents.writer.image", wantLine: 5, wantMsg: "not a valid image reference"},
		{name: "command with empty program", data: doc(`version: "1.0"`, `agents:`, `  writer:`, `    command: ["", "--x"]`), wantPath: "agents.writer.command[0]", wantLine: 4, wantMsg: "the program to run must not be empty"},
		{name: "bid_script with empty program", data: withLines(`    bid_script: [" "]`), wantPath: "agents.writer.bid_script[0]", wantLine: 5, wantMsg: "the program to run must not be empty"},
		{name: "bidding_strategy unknown", data: withLines(`    bidding_strategy: parallel`), wantPath: "agents.writer.bidding_strategy", wantLine: 5, wantMsg: `"parallel" is not valid (use review, claim, exclusive or ignore)`},
		{name: "consumes bad pattern", data: withLines(`    consumes:`, `      - Plan`, `      - "Code[a-"`), wantPath: "agents.writer.consumes[1]", wantLine: 7, wantMsg: `"Code[a-" is not a valid pattern`},
		{name: "consumes empty pattern", data: withLines(`    consumes: [""]`), wantPath: "agents.writer.consumes[0]", wantLine: 5, wantMsg: "an empty pattern matches no artefact type"},
		{name: "bid_script_timeout zero", data: withLines(`    bid_script_timeout: 0s`), wantPath: "agents.writer.bid_script_timeout", wantLine: 5, wantMsg: "0s is not valid"},
		{name: "workspace mode", data: doc(`version: "1.0"`, `agents:`, `  writer:`, `    command: [w]`, `    workspace:`, ``, ``, ``, ``, ``, ``, `      mode: readwrite`), wantPath: "agents.writer.workspace.mode", wantLine: 12, wantMsg: `sett.yml:12: agents.writer.workspace.mode: "readwrite" is not valid (use ro or rw)`},
		{name: "environment bad name", data: withLines(`    environment: {"LOG-LEVEL": debug}`), wantPath: "agents.writer.environment.LOG-LEVEL", wantLine: 5, wantMsg: `"LOG-LEVEL" is not a valid variable name`},
		{name: "environment leading digit", data: withLines(`    environment: {1X: y}`), wantPath: "agents.writer.environment.1X", wantLine: 5, wantMsg: "not starting with a digit"},
		{name: "environment reserved prefix", data: withLines(`    environment: {SETT_AGENT: x}`), wantPath: "agents.writer.environment.SETT_AGENT", wantLine: 5, wantMsg: "names starting with SETT_ are reserved for Sett"},
		{name: "environment REDIS_URL", data: withLines(`    environment:`, `      REDIS_URL: redis://x`), wantPath: "agents.writer.environment.REDIS_URL", wantLine: 6, wantMsg: "tools never get Redis credentials"},
		{name: "drain_timeout negative", data: withLines(`    drain_timeout: -1s`), wantPath: "agents.writer.drain_timeout", wantLine: 5, wantMsg: "-1s is not valid (use a duration like 45s"},
		{name: "environment_from_host bad name", data: withLines(`    environment_from_host: [OPENAI-KEY]`), wantPath: "agents.writer.environment_from_host[0]", wantLine: 5, wantMsg: `"OPENAI-KEY" is not a valid variable name`},
		{name: "environment_from_host Redis", data: withLines(`    environment_from_host: [OPENAI_API_KEY, SETT_REDIS_PASSWORD]`), wantPath: "agents.writer.environment_from_host[1]", wantLine: 5, wantMsg: "tools never get Redis credentials"},
		{name: "environment_from_host reserved", data: withLines(`    environment_from_host: [SETT_CONFIG]`), wantPath: "agents.writer.environment_from_host[0]", wantLine: 5, wantMsg: "reserved for Sett"},
		{name: "environment_from_host twice", data: withLines(`    environment_from_host: [A_KEY, A_KEY]`), wantPath: "agents.writer.environment_from_host[1]", wantLine: 5, wantMsg: `"A_KEY" is listed twice`},
		{name: "environment_from_host and environment", data: withLines(`    environment: {A_KEY: x}`, `    environment_from_host: [A_KEY]`), wantPath: "agents.writer.environment_from_host[0]", wantLine: 6, wantMsg: "also set in agents.writer.environment"},
		{name: "environment SETT_REDIS_URL", data: withLines(`    environment: {SETT_REDIS_URL: x}`), wantPath: "agents.writer.environment.SETT_REDIS_URL", wantLine: 5, wantMsg: "tools never get Redis credentials"},
		{name: "environment lower case redis", data: withLines(`    environment: {my_redis_pw: x}`), wantPath: "agents.writer.environment.my_redis_pw", wantLine: 5, wantMsg: "tools never get Redis credentials"},
		{name: "timeout zero", data: withLines(`    timeout: 0s`), wantPath: "agents.writer.timeout", wantLine: 5, wantMsg: "0s is not valid (must be greater than 0"},
		{name: "timeout bare zero", data: withLines(`    timeout: 0`), wantPath: "agents.writer.timeout", wantLine: 5, wantMsg: "0s is not valid"},
		{name: "max_concurrent zero", data: withLines(`    max_concurrent: 0`), wantPath: "agents.writer.max_concurrent", wantLine: 5, wantMsg: "0 is not valid (must be at least 1)"},
		{name: "max_output_bytes too small", data: withLines(`    max_output_bytes: 1000B`), wantPath: "agents.writer.max_output_bytes", wantLine: 5, wantMsg: "1KB is too small (must be at least 1KiB)"},
		{name: "max_output_bytes explicit zero", data: withLines(`    max_output_bytes: 0`), wantPath: "agents.writer.max_output_bytes", wantLine: 5, wantMsg: "0B is too small"},
		{name: "cpus negative", data: withLines(`    resources: {cpus: -0.5}`), wantPath: "agents.writer.resources.cpus", wantLine: 5, wantMsg: "-0.5 is not valid"},
		{name: "cpus infinite", data: withLines(`    resources: {cpus: .inf}`), wantPath: "agents.writer.resources.cpus", wantLine: 5, wantMsg: "+Inf is not a number of CPUs"},
		{name: "cpus NaN", data: withLines(`    resources: {cpus: .nan}`), wantPath: "agents.writer.resources.cpus", wantLine: 5, wantMsg: "NaN is not a number of CPUs"},
		{name: "memory below Docker's minimum", data: withLines(`    resources:`, `      memory: 4MiB`), wantPath: "agents.writer.resources.memory", wantLine: 6, wantMsg: "4MiB is too small (Docker needs at least 6MiB; use 0 for no limit)"},

		// services
		{name: "redis url scheme", data: withLines(`services: {redis: {url: "http://redis:6379"}}`), wantPath: "services.redis.url", wantLine: 5, wantMsg: `"http://redis:6379" has scheme "http" (use redis:// or rediss:// for TLS, unix:// for a socket on this host)`},
		{name: "redis url without scheme", data: withLines(`services: {redis: {url: "redis.example:6379"}}`), wantPath: "services.redis.url", wantLine: 5, wantMsg: `has scheme "redis.example"`},
		{name: "redis url without host", data: withLines(`services: {redis: {url: "redis://"}}`), wantPath: "services.redis.url", wantLine: 5, wantMsg: `"redis:" has no host`},
		{name: "redis unix url with a host", data: withLines(`services: {redis: {url: "unix://redis/tmp/redis.sock"}}`), wantPath: "services.redis.url", wantLine: 5, wantMsg: `needs an absolute socket path and no host`},
		{name: "redis unix url without a path", data: withLines(`services: {redis: {url: "unix://"}}`), wantPath: "services.redis.url", wantLine: 5, wantMsg: `needs an absolute socket path and no host`},
		{name: "redis unix url with tls", data: withLines(`services: {redis: {url: "unix:///run/redis.sock", tls: {enabled: true}}}`), wantPath: "services.redis.url", wantLine: 5, wantMsg: `a Unix socket, which Sett reaches without TLS`},
		{name: "redis url unparsable", data: withLines(`services: {redis: {url: "redis://[::1"}}`), wantPath: "services.redis.url", wantLine: 5, wantMsg: `services.redis.url: not a valid URL: missing ']' in host`},
		{name: "redis image with a space", data: withLines(`services: {redis: {image: "redis 7"}}`), wantPath: "services.redis.image", wantLine: 5, wantMsg: "not a valid image reference"},
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

func TestValidateAccepts(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{name: "minimal", data: withLines()},
		{name: "unquoted version", data: doc(`version: 1.0`, `agents: {writer: {}}`)},
		{name: "agent with no settings", data: doc(`version: "1.0"`, `agents:`, `  writer:`)},
		{name: "empty command", data: doc(`version: "1.0"`, `agents: {writer: {command: []}}`)},
		{name: "empty later argument", data: withLines(`    bid_script: [decide, ""]`)},
		{name: "instance of one character", data: withLines(`instance: a`)},
		{name: "instance of 63 characters", data: withLines(`instance: ` + strings.Repeat("a", 63))},
		{name: "agent name with underscore and dash", data: doc(`version: "1.0"`, `agents: {code_writer-2: {}}`)},
		{name: "zero resources", data: withLines(`    resources: {cpus: 0, memory: 0}`)},
		{name: "memory at Docker's minimum", data: withLines(`    resources: {memory: 6MiB}`)},
		{name: "integer cpus", data: withLines(`    resources: {cpus: 2}`)},
		{name: "payload at its limits", data: withLines(`orchestrator: {max_payload_bytes: 64MiB}`)},
		{name: "lease_ttl at its minimum", data: withLines(`orchestrator: {lease_ttl: 1s}`)},
		{name: "glob patterns", data: withLines(`    consumes: ["*", "Code?", "[A-Z]*Note", "Plan\\*"]`)},
		{name: "environment keys", data: withLines(`    environment: {_A: "1", lower_case: x, PATH_EXTRA: y}`)},
		{name: "http_addr with host", data: withLines(`orchestrator: {http_addr: "127.0.0.1:0"}`)},
		{name: "redis url plain", data: withLines(`services: {redis: {url: "redis://localhost:6379/0"}}`)},
		{name: "redis url TLS with ACL user", data: withLines(`services: {redis: {url: "rediss://sett:pw@redis.example:6380"}}`)},
		{name: "redis image explicitly empty takes the default", data: withLines(`services: {redis: {image: ""}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := Parse(tt.data, "sett.yml"); err != nil {
				t.Fatalf("Parse:\n%s\nerror: %v", tt.data, err)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	data := doc(
		`version: "1.0"`,
		`instance: Bad_Name`, // 2
		`orchestrator:`,
		`  bid_timeout: 0s`, // 4
		`agents:`,
		`  writer:`,
		`    bidding_strategy: sometimes`,  // 7
		`    workspace: {mode: readwrite}`, // 8
		`  reader:`,
		`    environment: {REDIS_PASSWORD: x}`, // 10
		`services:`,
		`  redis: {url: "ftp://x"}`, // 12
	)
	_, _, err := Parse(data, "sett.yml")
	got := fieldErrors(t, err)
	want := []struct {
		line int
		path string
	}{
		{2, "instance"},
		{4, "orchestrator.bid_timeout"},
		{7, "agents.writer.bidding_strategy"},
		{8, "agents.writer.workspace.mode"},
		{10, "agents.reader.environment.REDIS_PASSWORD"},
		{12, "services.redis.url"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(got), len(want), err)
	}
	for i, w := range want {
		if got[i].Line != w.line || got[i].Path != w.path {
			t.Errorf("error %d = %s (line %d), want %s at line %d", i, got[i].Path, got[i].Line, w.path, w.line)
		}
	}
	if !strings.HasPrefix(err.Error(), "config: 6 problems:\n  sett.yml:2: instance: ") {
		t.Errorf("message:\n%s", err)
	}
}

func TestValidateConfigBuiltInCode(t *testing.T) {
	cfg := Default()
	err := cfg.Validate()
	fe := findFieldError(t, err, "agents")
	if fe.File != "" || fe.Line != 0 {
		t.Errorf("error for a Config built in code has a location: %v", fe)
	}
	if got := fe.Error(); got != "agents: at least one agent is required (see sett.yml.example)" {
		t.Errorf("message = %q", got)
	}

	cfg.Agents["writer"] = AgentConfig{Command: []string{"sett-writer"}}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	// In code, a zero means "use the default", including for the orchestrator.
	cfg.Orchestrator.BidTimeout = 0
	cfg.ApplyDefaults()
	if got := cfg.Orchestrator.BidTimeout; got != DefaultBidTimeout {
		t.Errorf("BidTimeout after ApplyDefaults = %v, want %v", got, DefaultBidTimeout)
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{name: "none", data: withLines(), want: nil},
		{
			name: "unlimited review iterations",
			data: withLines(`orchestrator: {max_review_iterations: 0}`),
			want: []string{"sett.yml:5: orchestrator.max_review_iterations: 0 means unlimited: a rejected artefact goes back to its author until a reviewer approves it, possibly forever"},
		},
		{
			name: "agent that never bids",
			data: withLines(`    bidding_strategy: ignore`),
			want: []string{`sett.yml:5: agents.writer.bidding_strategy: agent "writer" bids ignore and has no bid_script, so it never gets any work`},
		},
		{name: "ignore with a bid script", data: withLines(`    bidding_strategy: ignore`, `    bid_script: [decide]`), want: nil},
		{name: "the learner never bids", data: withLines(`    bidding_strategy: ignore`, `orchestrator: {learner: writer}`), want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := mustParse(t, tt.data)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("warnings:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReservedAgentNames(t *testing.T) {
	t.Parallel()
	for _, name := range ReservedAgentNames() {
		_, _, err := Parse([]byte("version: \"1.0\"\nagents:\n  "+name+":\n    command: [\"x\"]\n"), "sett.yml")
		if err == nil || !strings.Contains(err.Error(), "reserved") || !strings.Contains(err.Error(), "sett.yml:3") {
			t.Errorf("agent named %q: %v, want a reserved-name error on line 3", name, err)
		}
	}
}

func TestServicesContainersValidation(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"root user", `user: "0:0"`, "services.containers.user"},
		{"named user", `user: "nobody"`, "not a numeric user"},
		{"pids below -1", `pids_limit: -2`, "services.containers.pids_limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := "version: \"1.0\"\nagents:\n  a: {command: [x]}\nservices:\n  containers: {" + tc.yaml + "}\n"
			cfg, _, err := Parse([]byte(yaml), "sett.yml")
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}
