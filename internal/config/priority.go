package config

import (
	"strconv"

	"github.com/settdev/sett/internal/priority"
)

// PriorityConfig scores every goal so that urgent work is granted first
// (orchestrator.priority; the rules are in package
// priority). Every key is optional.
type PriorityConfig struct {
	// Weights are the points of each part of a score.
	Weights PriorityWeights `yaml:"weights"`

	// ImportantSenders are addresses (ceo@company.com) or whole domains
	// (@company.com) whose goals earn weights.important_sender; addresses
	// compare case-insensitively. Default none.
	ImportantSenders []string `yaml:"important_senders"`
}

// PriorityWeights are the points of each part of a priority score. Each
// is a whole number between -1000000 and 1000000; a zero written in the
// file stays zero.
type PriorityWeights struct {
	// High is the points of priority: high. Default 10.
	High int `yaml:"high"`
	// Medium is the points of priority: medium. Default 5.
	Medium int `yaml:"medium"`
	// Low is the points of priority: low, and of no priority. Default 0.
	Low int `yaml:"low"`
	// Deadline2h is the points of a deadline closer than 2 hours, or
	// past. Default 20.
	Deadline2h int `yaml:"deadline_2h"`
	// Deadline1d is the points of a deadline closer than 1 day. Default
	// 10.
	Deadline1d int `yaml:"deadline_1d"`
	// Deadline1w is the points of a deadline closer than 1 week. Default
	// 5.
	Deadline1w int `yaml:"deadline_1w"`
	// ImportantSender is the points of a goal from an important sender.
	// Default 10.
	ImportantSender int `yaml:"important_sender"`
}

// ScoreWeights returns the settings as priority.Weights, for priority.Score.
func (pc PriorityConfig) ScoreWeights() priority.Weights {
	w := pc.Weights
	return priority.Weights{
		High: w.High, Medium: w.Medium, Low: w.Low,
		Deadline2h: w.Deadline2h, Deadline1d: w.Deadline1d, Deadline1w: w.Deadline1w,
		ImportantSender:  w.ImportantSender,
		ImportantSenders: append([]string(nil), pc.ImportantSenders...),
	}
}

// fields lists the weights by key, for defaults and validation.
func (w *PriorityWeights) fields() []struct {
	key string
	v   *int
	def int
} {
	d := priority.DefaultWeights()
	return []struct {
		key string
		v   *int
		def int
	}{
		{"high", &w.High, d.High},
		{"medium", &w.Medium, d.Medium},
		{"low", &w.Low, d.Low},
		{"deadline_2h", &w.Deadline2h, d.Deadline2h},
		{"deadline_1d", &w.Deadline1d, d.Deadline1d},
		{"deadline_1w", &w.Deadline1w, d.Deadline1w},
		{"important_sender", &w.ImportantSender, d.ImportantSender},
	}
}

func (pc *PriorityConfig) applyDefaults(c *Config, p string) {
	for _, f := range pc.Weights.fields() {
		setDefault(c, f.v, f.def, p+".weights."+f.key)
	}
}

func (pc *PriorityConfig) validate(v *validator, p string) {
	for _, f := range pc.Weights.fields() {
		if *f.v < -priority.MaxWeight || *f.v > priority.MaxWeight {
			v.addf(p+".weights."+f.key, "%d is out of range (must be between %d and %d)", *f.v, -priority.MaxWeight, priority.MaxWeight)
		}
	}
	for i, s := range pc.ImportantSenders {
		if err := priority.ValidateSender(s); err != nil {
			v.addf(p+".important_senders["+itoa(i)+"]", "%s", err.Error())
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
