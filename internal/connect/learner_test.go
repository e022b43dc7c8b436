package connect

import (
	"strings"
	"testing"
)

func TestLearnerConfigured(t *testing.T) {
	const agent = "agents:\n  learner:\n    command: [\"true\"]\n    bidding_strategy: ignore\n"
	tests := []struct {
		name    string
		file    string // sett.yml; "" for none
		want    bool
		wantErr string
	}{
		{name: "no sett.yml names none"},
		{name: "a learner", file: "version: \"1.0\"\norchestrator: {learner: learner}\n" + agent, want: true},
		{name: "no learner", file: "version: \"1.0\"\n" + agent},
		{name: "a file the loader refuses names none, and says why", file: "version: \"1.0\"\norchestrator: {learner: nobody}\n" + agent,
			wantErr: "sett.yml cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.file != "" {
				writeFile(t, dir, "sett.yml", tt.file)
			}
			got, err := LearnerConfigured(dir)
			if got != tt.want {
				t.Errorf("LearnerConfigured = %t, want %t", got, tt.want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}
