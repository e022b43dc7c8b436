package metrics

import (
	"bufio"
	"fmt"
	"sort"
	"sync/atomic"
)

// Histogram counts observations into cumulative buckets with fixed upper
// bounds, as Prometheus histograms do (`le` labels, _sum and _count).
type Histogram struct {
	bounds []float64
	counts []atomic.Uint64 // one per bound, plus +Inf at the end
	sum    atomicFloat
}

func newHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe records one value.
func (h *Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v
	h.counts[i].Add(1)
	h.sum.add(v)
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 {
	var n uint64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// Sum is the total of the observations.
func (h *Histogram) Sum() float64 { return h.sum.load() }

func (h *Histogram) write(w *bufio.Writer, name string, labels, values []string) {
	bl := append(append([]string(nil), labels...), "le")
	bv := append(append([]string(nil), values...), "")
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		bv[len(bv)-1] = formatFloat(b)
		writeSample(w, name+"_bucket", bl, bv, float64(cum))
	}
	cum += h.counts[len(h.bounds)].Load()
	bv[len(bv)-1] = "+Inf"
	writeSample(w, name+"_bucket", bl, bv, float64(cum))
	writeSample(w, name+"_sum", labels, values, h.Sum())
	writeSample(w, name+"_count", labels, values, float64(cum))
}

// checkBounds panics on bounds that are not strictly increasing: a
// programming error, caught at start-up.
func checkBounds(name string, bounds []float64) []float64 {
	for i := 1; i < len(bounds); i++ {
		if bounds[i] <= bounds[i-1] {
			panic(fmt.Sprintf("metrics: %s: bucket bounds not increasing: %v", name, bounds))
		}
	}
	return append([]float64(nil), bounds...)
}

type histogramFamily struct {
	opts Opts
	h    *Histogram
}

func (f histogramFamily) name() string { return f.opts.FullName() }
func (f histogramFamily) write(w *bufio.Writer) {
	writeHeader(w, f.name(), f.opts.Help, "histogram")
	f.h.write(w, f.name(), nil, nil)
}

// NewHistogram creates a histogram with these bucket upper bounds on r
// (r may be nil).
func (r *Registry) NewHistogram(opts Opts, bounds []float64) *Histogram {
	h := newHistogram(checkBounds(opts.FullName(), bounds))
	r.register(histogramFamily{opts: opts, h: h})
	return h
}

// HistogramVec is a histogram per combination of label values.
type HistogramVec struct{ v *vec[*Histogram] }

// WithLabelValues returns the histogram of these label values.
func (h *HistogramVec) WithLabelValues(values ...string) *Histogram { return h.v.get(values) }

type histogramVecFamily struct {
	opts Opts
	v    *vec[*Histogram]
}

func (f histogramVecFamily) name() string { return f.opts.FullName() }
func (f histogramVecFamily) write(w *bufio.Writer) {
	writeHeader(w, f.name(), f.opts.Help, "histogram")
	for _, c := range f.v.sorted() {
		c.metric.write(w, f.name(), f.v.labels, c.values)
	}
}

// NewHistogramVec creates a labelled histogram family on r (r may be nil).
func (r *Registry) NewHistogramVec(opts Opts, bounds []float64, labels ...string) *HistogramVec {
	b := checkBounds(opts.FullName(), bounds)
	v := newVec(labels, func() *Histogram { return newHistogram(b) })
	r.register(histogramVecFamily{opts: opts, v: v})
	return &HistogramVec{v: v}
}
