package metrics

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func scrape(t *testing.T, r *Registry) string {
	t.Helper()
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestScrapeParsesAsPrometheusText(t *testing.T) {
	r := NewStandardRegistry()
	c := r.NewCounter(Opts{Namespace: "sett", Subsystem: "cub", Name: "leases_lost_total", Help: "Leases lost."})
	cv := r.NewCounterVec(Opts{Namespace: "sett", Name: "bids_total", Help: "Bids, by bid."}, "bid")
	g := r.NewGauge(Opts{Name: "tools_running", Help: "Tools running."})
	h := r.NewHistogramVec(Opts{Name: "tool_seconds", Help: "Tool time."}, []float64{0.1, 1}, "outcome")
	c.Inc()
	c.Add(2)
	c.Add(-5) // ignored: counters never go down
	cv.WithLabelValues("review").Inc()
	cv.WithLabelValues(`we"ird\` + "\n").Inc()
	g.Inc()
	g.Inc()
	g.Dec()
	h.WithLabelValues("ok").Observe(0.05)
	h.WithLabelValues("ok").Observe(0.5)
	h.WithLabelValues("ok").Observe(7)

	text := scrape(t, r)
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("scrape does not parse: %v\n%s", err, text)
	}
	if v := fams["sett_cub_leases_lost_total"].GetMetric()[0].GetCounter().GetValue(); v != 3 {
		t.Errorf("counter = %v, want 3", v)
	}
	bids := fams["sett_bids_total"].GetMetric()
	if len(bids) != 2 {
		t.Fatalf("bids series = %d, want 2", len(bids))
	}
	seen := map[string]bool{}
	for _, m := range bids {
		seen[m.GetLabel()[0].GetValue()] = true
	}
	if !seen["review"] || !seen[`we"ird\`+"\n"] {
		t.Errorf("label values did not survive escaping: %v", seen)
	}
	if v := fams["tools_running"].GetMetric()[0].GetGauge().GetValue(); v != 1 {
		t.Errorf("gauge = %v, want 1", v)
	}
	hist := fams["tool_seconds"].GetMetric()[0].GetHistogram()
	if hist.GetSampleCount() != 3 || math.Abs(hist.GetSampleSum()-7.55) > 1e-9 {
		t.Errorf("histogram count %d sum %v, want 3 and 7.55", hist.GetSampleCount(), hist.GetSampleSum())
	}
	wantCum := []uint64{1, 2, 3} // le=0.1, le=1, le=+Inf
	for i, b := range hist.GetBucket() {
		if b.GetCumulativeCount() != wantCum[i] {
			t.Errorf("bucket le=%v cumulative %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), wantCum[i])
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("standard series %s missing", name)
		}
	}
	if rss := fams["process_resident_memory_bytes"].GetMetric()[0].GetGauge().GetValue(); rss < 1<<20 {
		t.Errorf("process_resident_memory_bytes = %v, not a plausible RSS", rss)
	}
}

func TestObservationOnABoundCountsInThatBucket(t *testing.T) {
	r := NewRegistry()
	h := r.NewHistogram(Opts{Name: "h"}, []float64{1, 2})
	h.Observe(1) // le="1" includes 1
	text := scrape(t, r)
	if !strings.Contains(text, `h_bucket{le="1"} 1`) || !strings.Contains(text, `h_bucket{le="+Inf"} 1`) {
		t.Errorf("bucket counts wrong:\n%s", text)
	}
}

func TestSeriesAreListedInLabelOrder(t *testing.T) {
	r := NewRegistry()
	cv := r.NewCounterVec(Opts{Name: "c"}, "k")
	for _, k := range []string{"b", "c", "a"} {
		cv.WithLabelValues(k).Inc()
	}
	text := scrape(t, r)
	if a, b, c := strings.Index(text, `k="a"`), strings.Index(text, `k="b"`), strings.Index(text, `k="c"`); !(a < b && b < c) {
		t.Errorf("series not in label order:\n%s", text)
	}
}

func TestNilRegistryMetricsStillCount(t *testing.T) {
	var r *Registry
	c := r.NewCounter(Opts{Name: "c"})
	c.Inc()
	if c.Value() != 1 {
		t.Errorf("counter on a nil registry = %v, want 1", c.Value())
	}
}

func TestRegisteringANameTwicePanics(t *testing.T) {
	r := NewRegistry()
	r.NewCounter(Opts{Name: "dup"})
	defer func() {
		if recover() == nil {
			t.Error("second registration of dup did not panic")
		}
	}()
	r.NewGauge(Opts{Name: "dup"})
}

func TestWrongLabelCountPanics(t *testing.T) {
	cv := NewRegistry().NewCounterVec(Opts{Name: "c"}, "a", "b")
	defer func() {
		if recover() == nil {
			t.Error("one value for two labels did not panic")
		}
	}()
	cv.WithLabelValues("x")
}

func TestSubsystemOptsNameSettSeries(t *testing.T) {
	for _, tc := range []struct {
		name, subsystem, series, want string
	}{
		{"cub", "cub", "bids_total", "sett_cub_bids_total"},
		{"orchestrator", "orchestrator", "leading", "sett_orchestrator_leading"},
		{"no subsystem", "", "up", "sett_up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Subsystem(tc.subsystem).Opts(tc.series, "help text")
			if got := o.FullName(); got != tc.want || o.Help != "help text" {
				t.Errorf("Opts = %+v (full name %q), want %q with its help", o, got, tc.want)
			}
		})
	}
}
