package config

import (
	"strings"
	"testing"
)

func TestIsolationKeys(t *testing.T) {
	base := "version: \"1.0\"\nagents:\n  a:\n    command: [\"true\"]\n    consumes: [\"GoalDefined\"]\n"
	tests := []struct {
		name      string
		extra     string
		isolation Isolation
		uid       int
		wantErr   string // "" means valid
	}{
		{name: "defaults", isolation: IsolationSandbox, uid: DefaultToolUID},
		{name: "none by choice", extra: "isolation: none\n", isolation: IsolationNone, uid: DefaultToolUID},
		{name: "own uid", extra: "tool_uid: 1500\n", isolation: IsolationSandbox, uid: 1500},
		{name: "unknown mode", extra: "isolation: off\n", wantErr: `isolation: "off" is not an isolation mode (use one of: sandbox, none)`},
		{name: "root uid", extra: "tool_uid: 0\n", wantErr: "tool_uid: 0 is not a uid a tool can run as"},
		{name: "negative uid", extra: "tool_uid: -1\n", wantErr: "tool_uid: -1 is not a uid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Parse([]byte(base+tc.extra), "sett.yml")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Isolation != tc.isolation || c.ToolUID != tc.uid {
				t.Errorf("isolation %q, tool_uid %d; want %q, %d", c.Isolation, c.ToolUID, tc.isolation, tc.uid)
			}
		})
	}
}
