package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestWorkerConfigRefused(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		wantPath string
		wantLine int
		wantMsg  string
	}{
		{name: "unknown mode", data: withLines(`    mode: workers`), wantPath: "agents.writer.mode", wantLine: 5,
			wantMsg: `"workers" is not valid (use controller`},
		{name: "controller without worker image", data: withLines(`    mode: controller`), wantPath: "agents.writer.worker.image", wantLine: 3,
			wantMsg: "required with mode: controller"},
		{name: "worker image with a space", data: withLines(`    mode: controller`, `    worker: {image: "a b"}`), wantPath: "agents.writer.worker.image", wantLine: 6,
			wantMsg: `"a b" is not a valid image reference`},
		{name: "worker keys without controller mode", data: withLines(`    worker:`, `      image: sett-example-writer:local`), wantPath: "agents.writer.worker", wantLine: 5,
			wantMsg: "worker settings need mode: controller"},
		{name: "worker max_concurrent zero", data: withLines(`    mode: controller`, `    worker: {image: w, max_concurrent: 0}`), wantPath: "agents.writer.worker.max_concurrent", wantLine: 6,
			wantMsg: "0 is not valid (must be at least 1)"},
		{name: "worker command with empty program", data: withLines(`    mode: controller`, `    worker: {image: w, command: [""]}`), wantPath: "agents.writer.worker.command[0]", wantLine: 6,
			wantMsg: "the program to run must not be empty"},
		{name: "no command at all", data: doc(`version: "1.0"`, `agents:`, `  writer:`, `    mode: controller`, `    worker: {image: w}`), wantPath: "agents.writer.worker.command", wantLine: 5,
			wantMsg: "required with mode: controller when the agent has no command"},
		{name: "both limits differ", data: withLines(`    mode: controller`, `    max_concurrent: 3`, `    worker: {image: w, max_concurrent: 2}`), wantPath: "agents.writer.max_concurrent", wantLine: 6,
			wantMsg: "3 differs from worker.max_concurrent 2"},
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

func TestWorkerConfigDefaults(t *testing.T) {
	tests := []struct {
		name              string
		data              []byte
		wantMaxConcurrent int
		wantCommand       []string
	}{
		{name: "defaults", data: withLines(`    mode: controller`, `    worker: {image: w}`),
			wantMaxConcurrent: 1, wantCommand: []string{"sett-writer"}},
		{name: "worker.max_concurrent sets max_concurrent", data: withLines(`    mode: controller`, `    worker: {image: w, max_concurrent: 3}`),
			wantMaxConcurrent: 3, wantCommand: []string{"sett-writer"}},
		{name: "max_concurrent alone sets worker.max_concurrent", data: withLines(`    mode: controller`, `    max_concurrent: 2`, `    worker: {image: w}`),
			wantMaxConcurrent: 2, wantCommand: []string{"sett-writer"}},
		{name: "equal limits", data: withLines(`    mode: controller`, `    max_concurrent: 2`, `    worker: {image: w, max_concurrent: 2}`),
			wantMaxConcurrent: 2, wantCommand: []string{"sett-writer"}},
		{name: "worker.command replaces command", data: withLines(`    mode: controller`, `    worker: {image: w, command: [sh, -c, "x"]}`),
			wantMaxConcurrent: 1, wantCommand: []string{"sh", "-c", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := mustParse(t, tt.data)
			a, _ := cfg.Agent("writer")
			if !a.IsController() {
				t.Fatalf("mode = %q, want controller", a.Mode)
			}
			if a.MaxConcurrent != tt.wantMaxConcurrent || a.Worker.MaxConcurrent != tt.wantMaxConcurrent {
				t.Errorf("max_concurrent = %d, worker.max_concurrent = %d, want both %d", a.MaxConcurrent, a.Worker.MaxConcurrent, tt.wantMaxConcurrent)
			}
			if got := a.WorkerCommand(); !slices.Equal(got, tt.wantCommand) {
				t.Errorf("WorkerCommand() = %q, want %q", got, tt.wantCommand)
			}
		})
	}
}

func TestUsualModeKeepsMaxConcurrent(t *testing.T) {
	cfg, _ := mustParse(t, withLines(`    max_concurrent: 4`))
	a, _ := cfg.Agent("writer")
	if a.IsController() || a.MaxConcurrent != 4 || a.Worker.MaxConcurrent != 0 {
		t.Errorf("mode %q, max_concurrent %d, worker.max_concurrent %d; want usual mode, 4, 0", a.Mode, a.MaxConcurrent, a.Worker.MaxConcurrent)
	}
}
