package bench

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Stat names one statistic of a figure that a target is checked against.
type Stat string

// The statistics a Figure carries.
const (
	StatP50 Stat = "p50"
	StatP90 Stat = "p90"
	StatP99 Stat = "p99"
	StatMin Stat = "min"
	StatMax Stat = "max"
)

// Check is one bound of a target: Stat must be at most Value
// (AtLeast false) or at least Value (AtLeast true).
type Check struct {
	Stat    Stat    `json:"stat"`
	AtLeast bool    `json:"at_least,omitempty"`
	Value   float64 `json:"value"`
}

func (c Check) String() string {
	op := "≤"
	if c.AtLeast {
		op = "≥"
	}
	return fmt.Sprintf("%s %s %s", c.Stat, op, formatValue(c.Value))
}

// Status is the verdict of a figure against its target.
type Status string

// Figure statuses. Info marks figures without a target.
const (
	StatusPass Status = "pass"
	StatusMiss Status = "miss"
	StatusInfo Status = "info"
)

// Figure is one measured figure: its distribution over Samples
// observations and its verdict against the target.
type Figure struct {
	// Name is a stable snake_case identifier ("hop_1_agent").
	Name string `json:"name"`
	// Title is the human description shown in the table.
	Title string `json:"title"`
	Unit  string `json:"unit"`
	// Samples is the number of observations the statistics are taken over;
	// SampleOf says what one observation is ("hop", "round of 200 goals").
	Samples  int     `json:"samples"`
	SampleOf string  `json:"sample_of"`
	P50      float64 `json:"p50"`
	P90      float64 `json:"p90"`
	P99      float64 `json:"p99"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	Mean     float64 `json:"mean"`
	// Target is the target as text; Checks is its machine form.
	Target string  `json:"target"`
	Checks []Check `json:"checks,omitempty"`
	Status Status  `json:"status"`
	// Note says how the figure was measured when the title cannot.
	Note string `json:"note,omitempty"`
	// Values are the raw observations, in the unit, in the order taken.
	Values []float64 `json:"values,omitempty"`
}

// NewFigure summarises values (in unit) and judges them against checks.
// Without checks the figure is informational.
func NewFigure(name, title, unit, sampleOf string, values []float64, target string, checks ...Check) Figure {
	f := Figure{Name: name, Title: title, Unit: unit, SampleOf: sampleOf, Samples: len(values),
		Target: target, Checks: checks, Values: append([]float64(nil), values...)}
	if len(values) > 0 {
		sorted := append([]float64(nil), values...)
		sort.Float64s(sorted)
		f.P50, f.P90, f.P99 = Percentile(sorted, 50), Percentile(sorted, 90), Percentile(sorted, 99)
		f.Min, f.Max = sorted[0], sorted[len(sorted)-1]
		var sum float64
		for _, v := range sorted {
			sum += v
		}
		f.Mean = sum / float64(len(sorted))
	}
	f.Status = f.judge()
	return f
}

// Stat returns the value of one statistic.
func (f Figure) Stat(s Stat) float64 {
	switch s {
	case StatP50:
		return f.P50
	case StatP90:
		return f.P90
	case StatP99:
		return f.P99
	case StatMin:
		return f.Min
	case StatMax:
		return f.Max
	}
	return math.NaN()
}

func (f Figure) judge() Status {
	if len(f.Checks) == 0 {
		return StatusInfo
	}
	if f.Samples == 0 {
		return StatusMiss
	}
	for _, c := range f.Checks {
		v := f.Stat(c.Stat)
		if c.AtLeast && !(v >= c.Value) || !c.AtLeast && !(v <= c.Value) {
			return StatusMiss
		}
	}
	return StatusPass
}

// Percentile returns the p-th percentile (0..100) of sorted values by the
// nearest-rank method: the smallest value with at least p% of the values
// at or below it. It is always an observed value, never an interpolation,
// so p99 of 100 samples is the 99th smallest. Empty input gives NaN.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return sorted[rank-1]
}

// formatValue prints a value with about three significant digits.
func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "-"
	case a == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strings.TrimRight(strconv.FormatFloat(v, 'g', 3, 64), ".")
}
