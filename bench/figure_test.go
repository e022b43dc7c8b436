package bench

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	for _, tc := range []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"median of odd count", []float64{1, 2, 3}, 50, 2},
		{"median of even count is the lower middle", []float64{1, 2, 3, 4}, 50, 2},
		{"p99 of 100 is the 99th", hundred, 99, 99},
		{"p90 of 100 is the 90th", hundred, 90, 90},
		{"p100 is the max", hundred, 100, 100},
		{"p0 is the min", hundred, 0, 1},
		{"p99 of 3 is the max", []float64{1, 2, 3}, 99, 3},
		{"one sample", []float64{7}, 50, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.p); got != tc.want {
				t.Fatalf("Percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Fatal("Percentile of nothing must be NaN")
	}
}

func TestNewFigureJudges(t *testing.T) {
	values := []float64{4, 3, 5, 30, 2} // sorted: 2 3 4 5 30
	for _, tc := range []struct {
		name   string
		values []float64
		checks []Check
		want   Status
	}{
		{"no target is informational", values, nil, StatusInfo},
		{"p50 within", values, []Check{{Stat: StatP50, Value: 4}}, StatusPass},
		{"p50 over", values, []Check{{Stat: StatP50, Value: 3.9}}, StatusMiss},
		{"second check misses", values, []Check{{Stat: StatP50, Value: 5}, {Stat: StatP99, Value: 25}}, StatusMiss},
		{"at least, met", values, []Check{{Stat: StatMin, AtLeast: true, Value: 2}}, StatusPass},
		{"at least, missed", values, []Check{{Stat: StatP50, AtLeast: true, Value: 300}}, StatusMiss},
		{"no samples cannot pass", nil, []Check{{Stat: StatMax, Value: 1}}, StatusMiss},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFigure("x", "x", "ms", "samples", tc.values, "target", tc.checks...)
			if f.Status != tc.want {
				t.Fatalf("status %s, want %s (figure %+v)", f.Status, tc.want, f)
			}
		})
	}
	f := NewFigure("x", "x", "ms", "samples", values, "")
	if f.Samples != 5 || f.P50 != 4 || f.Min != 2 || f.Max != 30 || f.P99 != 30 || f.Mean != 8.8 {
		t.Fatalf("summary %+v", f)
	}
	if values[0] != 4 {
		t.Fatal("NewFigure sorted the caller's slice")
	}
}
