package config

import (
	"strings"
	"testing"
	"time"
)

func TestRetentionZeroKeepsForever(t *testing.T) {
	cfg, _ := mustParse(t, withLines(
		`retention:`,
		`  workflows: 0`,
		`  events_max_len: 0`,
		`  events_max_age: 0s`,
		`  consumer_idle: 0`,
	))
	r := cfg.Retention
	if r.Workflows != 0 || r.EventsMaxLen != 0 || r.EventsMaxAge != 0 || r.ConsumerIdle != 0 {
		t.Errorf("retention = %+v, want explicit zeros kept (keep forever)", r)
	}
	if r.Interval != DefaultRetentionInterval || r.Batch != DefaultRetentionBatch {
		t.Errorf("retention = %+v, want default interval and batch", r)
	}
	def, _ := mustParse(t, withLines())
	if def.Retention.Workflows != Duration(168*time.Hour) {
		t.Errorf("default retention.workflows = %s, want 168h", def.Retention.Workflows)
	}
}

func TestRetentionRejectsBadValues(t *testing.T) {
	cases := []struct {
		name, line, path string
	}{
		{"negative workflows", `  workflows: -1h`, "retention.workflows"},
		{"negative length", `  events_max_len: -5`, "retention.events_max_len"},
		{"zero interval", `  interval: 0s`, "retention.interval"},
		{"zero batch", `  batch: 0`, "retention.batch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse(withLines(`retention:`, tc.line), "sett.yml")
			fe := findFieldError(t, err, tc.path)
			if fe.Line != len(minimalLines)+2 || !strings.Contains(fe.Message, "not valid") {
				t.Errorf("error = %+v, want line %d saying not valid", fe, len(minimalLines)+2)
			}
		})
	}
}
