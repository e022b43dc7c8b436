package orchestrator

import (
	"slices"
	"testing"
)

func TestReworker(t *testing.T) {
	agents := map[string]string{"coder-a": "coder", "coder-b": "coder", "planner": "planner", "solo": "writer"}
	names := []string{"coder-a", "coder-b", "planner", "solo"}
	tests := []struct {
		name         string
		producer     string
		role         string
		live         []string
		want         string
		wantFallback bool
		wantOK       bool
	}{
		{name: "the live producer, not the first of its role", producer: "coder-b", role: "coder", live: []string{"coder-a", "coder-b"}, want: "coder-b", wantOK: true},
		{name: "a gone producer falls back to a live agent of the role", producer: "coder-b", role: "coder", live: []string{"coder-a"}, want: "coder-a", wantFallback: true, wantOK: true},
		{name: "nobody live: the producer waits for its claim", producer: "coder-b", role: "coder", live: nil, want: "coder-b", wantOK: true},
		{name: "a producer no longer configured falls back", producer: "coder-z", role: "coder", live: []string{"coder-b"}, want: "coder-b", wantFallback: true, wantOK: true},
		{name: "no producer recorded: the first live of the role", producer: "", role: "coder", live: []string{"coder-b"}, want: "coder-b", wantFallback: true, wantOK: true},
		{name: "no producer recorded, nobody live: the first of the role", producer: "", role: "coder", live: nil, want: "coder-a", wantFallback: true, wantOK: true},
		{name: "nobody of the role", producer: "", role: "designer", live: names, wantOK: false},
		{name: "a single producer", producer: "solo", role: "writer", live: []string{"solo"}, want: "solo", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fallback, ok := reworker(tt.producer, tt.role, agents, names, func(n string) bool { return slices.Contains(tt.live, n) })
			if got != tt.want || fallback != tt.wantFallback || ok != tt.wantOK {
				t.Fatalf("reworker = %q fallback %v ok %v; want %q %v %v", got, fallback, ok, tt.want, tt.wantFallback, tt.wantOK)
			}
		})
	}
}
