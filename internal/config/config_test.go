package config

import (
	"slices"
	"testing"
)

func TestAgentLookups(t *testing.T) {
	cfg, _ := mustParse(t, doc(
		`version: "1.0"`,
		`agents:`,
		`  zeta: {role: writer}`,
		`  alpha: {role: writer}`,
		`  critic: {role: reviewer, bidding_strategy: review}`,
		`  solo: {}`,
	))

	t.Run("AgentNames sorted", func(t *testing.T) {
		if got, want := cfg.AgentNames(), []string{"alpha", "critic", "solo", "zeta"}; !slices.Equal(got, want) {
			t.Fatalf("AgentNames() = %v, want %v", got, want)
		}
	})

	roles := []struct {
		name string
		role string
		want []string
	}{
		{name: "shared role", role: "writer", want: []string{"alpha", "zeta"}},
		{name: "single", role: "reviewer", want: []string{"critic"}},
		{name: "role defaulted to the name", role: "solo", want: []string{"solo"}},
		{name: "unknown role", role: "nobody", want: nil},
	}
	for _, tt := range roles {
		t.Run("AgentsByRole "+tt.name, func(t *testing.T) {
			if got := cfg.AgentsByRole(tt.role); !slices.Equal(got, tt.want) {
				t.Fatalf("AgentsByRole(%q) = %v, want %v", tt.role, got, tt.want)
			}
		})
	}

	lookups := []struct {
		name     string
		agent    string
		wantOK   bool
		wantRole string
	}{
		{name: "present", agent: "critic", wantOK: true, wantRole: "reviewer"},
		{name: "absent", agent: "ghost", wantOK: false},
	}
	for _, tt := range lookups {
		t.Run("Agent "+tt.name, func(t *testing.T) {
			a, ok := cfg.Agent(tt.agent)
			if ok != tt.wantOK || a.Role != tt.wantRole {
				t.Fatalf("Agent(%q) = role %q, %v; want %q, %v", tt.agent, a.Role, ok, tt.wantRole, tt.wantOK)
			}
			if ok && a.Name != tt.agent {
				t.Fatalf("Agent(%q).Name = %q", tt.agent, a.Name)
			}
		})
	}
}

func TestAgentsByRoleBeforeDefaults(t *testing.T) {
	cfg := &Config{Agents: map[string]AgentConfig{"planner": {}, "b": {Role: "planner"}}}
	if got, want := cfg.AgentsByRole("planner"), []string{"b", "planner"}; !slices.Equal(got, want) {
		t.Fatalf("AgentsByRole = %v, want %v", got, want)
	}
	if _, ok := cfg.Agent("planner"); !ok {
		t.Fatal(`Agent("planner") not found`)
	}
}

func TestReviewIterationLimit(t *testing.T) {
	zero, five := 0, 5
	tests := []struct {
		name string
		in   *int
		want int
	}{
		{name: "unset means the default", in: nil, want: DefaultMaxReviewIterations},
		{name: "zero means unlimited", in: &zero, want: 0},
		{name: "explicit", in: &five, want: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := OrchestratorConfig{MaxReviewIterations: tt.in}
			if got := o.ReviewIterationLimit(); got != tt.want {
				t.Fatalf("ReviewIterationLimit() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEnumsValid(t *testing.T) {
	tests := []struct {
		name  string
		valid bool
		want  bool
	}{
		{name: "review", valid: BidReview.Valid(), want: true},
		{name: "claim", valid: BidClaim.Valid(), want: true},
		{name: "exclusive", valid: BidExclusive.Valid(), want: true},
		{name: "ignore", valid: BidIgnore.Valid(), want: true},
		{name: "empty strategy", valid: BiddingStrategy("").Valid(), want: false},
		{name: "upper-case strategy", valid: BiddingStrategy("Review").Valid(), want: false},
		{name: "ro", valid: WorkspaceReadOnly.Valid(), want: true},
		{name: "rw", valid: WorkspaceReadWrite.Valid(), want: true},
		{name: "readwrite", valid: WorkspaceMode("readwrite").Valid(), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.valid != tt.want {
				t.Fatalf("Valid() = %v, want %v", tt.valid, tt.want)
			}
		})
	}
}

func TestDefaultIsIdempotent(t *testing.T) {
	a := Default()
	b := Default()
	b.ApplyDefaults()
	if a.Orchestrator.ReviewIterationLimit() != b.Orchestrator.ReviewIterationLimit() ||
		a.Orchestrator.BidTimeout != b.Orchestrator.BidTimeout ||
		a.Services.Redis.Image != b.Services.Redis.Image {
		t.Fatal("ApplyDefaults on a defaulted Config changed it")
	}
	if a.Version != CurrentVersion || a.Orchestrator.HTTPAddr != DefaultHTTPAddr || a.Agents == nil {
		t.Fatalf("Default() = %+v", a)
	}
}

func TestConnectURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, url, password, want string }{
		{"no password", "redis://h:6379/0", "", "redis://h:6379/0"},
		{"added", "redis://h:6379/0", "pw", "redis://:pw@h:6379/0"},
		{"escaped", "rediss://h:6380", "a b@c", "rediss://:a%20b%40c@h:6380"},
		{"the URL's own wins", "redis://:mine@h:6379", "pw", "redis://:mine@h:6379"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (RedisConfig{URL: tc.url, Password: tc.password}).ConnectURL(); got != tc.want {
				t.Errorf("ConnectURL(%q, %q) = %q, want %q", tc.url, tc.password, got, tc.want)
			}
		})
	}
}
