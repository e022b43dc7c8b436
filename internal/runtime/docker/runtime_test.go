package docker

import (
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"zero options", Options{}, ""},
		{"a host", Options{Host: "tcp://127.0.0.1:2375"}, ""},
		{"a bad host", Options{Host: "::not a host"}, "host"},
		{"a user", Options{User: "1000:1000"}, ""},
		{"root by id", Options{User: "0:0"}, "root"},
		{"root by name", Options{User: "root"}, "root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := New(tc.opts)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("New: %v, want an error about %s", err, tc.wantErr)
			case err == nil && rt.Name() != "docker":
				t.Errorf("Name() = %q", rt.Name())
			}
		})
	}
}

func TestIsLocalTag(t *testing.T) {
	tests := []struct {
		ref  string
		want bool
	}{
		{"sett-cub:local", true},
		{"registry.example.com:5000/team/agent:local", true},
		{"redis:7", false},
		{"redis", false},
		{"localhost/agent:latest", false},
	}
	for _, tc := range tests {
		if got := isLocalTag(tc.ref); got != tc.want {
			t.Errorf("isLocalTag(%q) = %v, want %v", tc.ref, got, tc.want)
		}
	}
}

func TestSettingsList(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a and b"},
		{[]string{"a", "b", "c"}, "a, b and c"},
	} {
		if got := settingsList(tc.in); got != tc.want {
			t.Errorf("settingsList(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestListingStatus(t *testing.T) {
	tests := []struct {
		name       string
		components map[string]string
		running    int
		want       string
	}{
		{"all healthy", map[string]string{"redis": ComponentHealthy, "planner": ComponentHealthy}, 2, StatusRunning},
		{"one restarting", map[string]string{"redis": ComponentHealthy, "planner": ComponentRestarting}, 1, StatusDegraded},
		{"redis starting", map[string]string{"redis": ComponentStarting, "planner": ComponentHealthy}, 2, StatusDegraded},
		{"nothing runs", map[string]string{"redis": "stopped (exit 0)"}, 0, StatusStopped},
		{"only the volume is left", map[string]string{}, 0, StatusStopped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := listingStatus(tc.components, tc.running); got != tc.want {
				t.Errorf("listingStatus = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestComponentStateWithoutProbes(t *testing.T) {
	tests := []struct {
		name string
		c    container.Summary
		want string
	}{
		{"exited with a code", container.Summary{State: container.StateExited, Status: "Exited (3) 5 seconds ago"}, "stopped (exit 3)"},
		{"created", container.Summary{State: container.StateCreated, Status: "Created"}, ComponentStopped},
		{"restarting", container.Summary{State: container.StateRestarting, Status: "Restarting (1) 1 second ago"}, ComponentRestarting},
		{"running, healthcheck passing", container.Summary{State: container.StateRunning, Status: "Up 3 minutes (healthy)"}, ComponentHealthy},
		{"running, healthcheck starting", container.Summary{State: container.StateRunning, Status: "Up 2 seconds (health: starting)"}, ComponentStarting},
		{"running, healthcheck failing", container.Summary{State: container.StateRunning, Status: "Up 1 minute (unhealthy)"}, ComponentUnhealthy},
		{"running, health from the summary", container.Summary{State: container.StateRunning, Status: "Up 1 minute",
			Health: &container.HealthSummary{Status: container.Unhealthy}}, ComponentUnhealthy},
		{"running, no healthcheck", container.Summary{State: container.StateRunning, Status: "Up 1 minute"}, ComponentHealthy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := componentState(t.Context(), tc.c); got != tc.want {
				t.Errorf("componentState = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestComponentName(t *testing.T) {
	if got := componentName(map[string]string{LabelComponent: ComponentAgent, LabelAgent: "coder"}); got != "coder" {
		t.Errorf("agent: %q", got)
	}
	if got := componentName(map[string]string{LabelComponent: ComponentOrchestrator}); got != "orchestrator" {
		t.Errorf("orchestrator: %q", got)
	}
}
