package config

import "time"

// Retention defaults (retention in sett.yml). sett.yml.example documents
// each one next to its key.
const (
	DefaultRetentionWorkflows = Duration(168 * time.Hour)
	// The events stream costs about 240 bytes per entry and 10 entries per
	// one-hop workflow (make bench, scale-inflight): 250 000 entries are
	// about 60 MB, the events of 25 000 one-hop workflows. Events live as
	// long as the workflows they describe (retention.workflows).
	DefaultRetentionEventsMaxLen = 250_000
	DefaultRetentionEventsMaxAge = Duration(168 * time.Hour)
	DefaultRetentionConsumerIdle = Duration(24 * time.Hour)
	DefaultRetentionInterval     = Duration(time.Minute)
	DefaultRetentionBatch        = 100
)

// RetentionConfig bounds how much history Redis keeps. The
// leading orchestrator's janitor applies it; `sett gc --dry-run` shows what
// it would remove. `sett down` never deletes data whatever this says.
//
// A finished workflow's records go as one unit: the workflow, its
// artefacts and versions, claims with bids, grants, outputs and failures,
// memories, and its entries in every index (approvals included). Learnings
// and the tool memory stay: they are knowledge, not one workflow's history.
//
// In a file every key is optional; a missing key takes its default, and an
// explicit 0 keeps that kind of data forever.
type RetentionConfig struct {
	// Workflows is how long a finished (completed, failed, rejected,
	// cancelled) workflow is kept after it ended. Default 168h (7 days);
	// 0 keeps workflows forever. Running workflows are never deleted.
	Workflows Duration `yaml:"workflows"`

	// EventsMaxLen caps the events stream (the audit log that `sett watch`
	// replays) at about this many entries (XTRIM MAXLEN ~), about 240
	// bytes each. Default 250000 (about 60 MB); 0: no length bound.
	EventsMaxLen int64 `yaml:"events_max_len"`

	// EventsMaxAge drops events older than this (XTRIM MINID ~). Default
	// 168h (7 days, as long as finished workflows are kept); 0: no age
	// bound.
	EventsMaxAge Duration `yaml:"events_max_age"`

	// ConsumerIdle removes a stream consumer (a cub replica or an old
	// orchestrator process) idle this long with nothing pending, and a
	// replica whose last beat is this old. Default 24h; 0 keeps them.
	ConsumerIdle Duration `yaml:"consumer_idle"`

	// Interval is the period of the janitor's passes. Default 1m; must be
	// > 0.
	Interval Duration `yaml:"interval"`

	// Batch caps the workflows deleted in one pass (each in its own atomic
	// step), so a backlog drains over several passes instead of loading
	// Redis at once. Default 100; must be at least 1.
	Batch int `yaml:"batch"`
}

func (r *RetentionConfig) applyDefaults(c *Config) {
	setDefault(c, &r.Workflows, DefaultRetentionWorkflows, "retention.workflows")
	setDefault(c, &r.EventsMaxLen, DefaultRetentionEventsMaxLen, "retention.events_max_len")
	setDefault(c, &r.EventsMaxAge, DefaultRetentionEventsMaxAge, "retention.events_max_age")
	setDefault(c, &r.ConsumerIdle, DefaultRetentionConsumerIdle, "retention.consumer_idle")
	setDefault(c, &r.Interval, DefaultRetentionInterval, "retention.interval")
	setDefault(c, &r.Batch, DefaultRetentionBatch, "retention.batch")
}

func (r *RetentionConfig) validate(v *validator) {
	for _, d := range []struct {
		path string
		val  Duration
	}{
		{"retention.workflows", r.Workflows},
		{"retention.events_max_age", r.EventsMaxAge},
		{"retention.consumer_idle", r.ConsumerIdle},
	} {
		if d.val < 0 {
			v.addf(d.path, "%s is not valid (must be 0 to keep forever, or a duration like 168h)", d.val)
		}
	}
	if r.EventsMaxLen < 0 {
		v.addf("retention.events_max_len", "%d is not valid (must be 0 for no bound, or a number of entries like 1000000)", r.EventsMaxLen)
	}
	positiveDuration(v, "retention.interval", r.Interval)
	if r.Batch < 1 {
		v.addf("retention.batch", "%d is not valid (must be at least 1)", r.Batch)
	}
}
