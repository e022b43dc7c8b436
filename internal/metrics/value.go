package metrics

import (
	"bufio"
	"math"
	"sync/atomic"
)

// atomicFloat is a float64 updated without locks.
type atomicFloat struct{ bits atomic.Uint64 }

func (a *atomicFloat) load() float64   { return math.Float64frombits(a.bits.Load()) }
func (a *atomicFloat) store(v float64) { a.bits.Store(math.Float64bits(v)) }
func (a *atomicFloat) add(d float64) {
	for {
		old := a.bits.Load()
		if a.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

// Counter only goes up.
type Counter struct{ v atomicFloat }

// Inc adds one.
func (c *Counter) Inc() { c.v.add(1) }

// Add adds d; a negative d is ignored, since a counter never goes down.
func (c *Counter) Add(d float64) {
	if d > 0 {
		c.v.add(d)
	}
}

// Value is the current count.
func (c *Counter) Value() float64 { return c.v.load() }

// Gauge goes up and down.
type Gauge struct{ v atomicFloat }

// Set replaces the value.
func (g *Gauge) Set(v float64) { g.v.store(v) }

// Inc adds one.
func (g *Gauge) Inc() { g.v.add(1) }

// Dec subtracts one.
func (g *Gauge) Dec() { g.v.add(-1) }

// Add adds d (may be negative).
func (g *Gauge) Add(d float64) { g.v.add(d) }

// Value is the current value.
func (g *Gauge) Value() float64 { return g.v.load() }

// scalarFamily exposes one counter or gauge without labels.
type scalarFamily struct {
	opts Opts
	typ  string
	get  func() float64
}

func (f scalarFamily) name() string { return f.opts.FullName() }
func (f scalarFamily) write(w *bufio.Writer) {
	writeHeader(w, f.name(), f.opts.Help, f.typ)
	writeSample(w, f.name(), nil, nil, f.get())
}

// NewCounter creates a counter and registers it on r (r may be nil).
func (r *Registry) NewCounter(opts Opts) *Counter {
	c := &Counter{}
	r.register(scalarFamily{opts: opts, typ: "counter", get: c.Value})
	return c
}

// NewGauge creates a gauge and registers it on r (r may be nil).
func (r *Registry) NewGauge(opts Opts) *Gauge {
	g := &Gauge{}
	r.register(scalarFamily{opts: opts, typ: "gauge", get: g.Value})
	return g
}

// CounterVec is a counter per combination of label values.
type CounterVec struct{ v *vec[*Counter] }

// WithLabelValues returns the counter of these label values.
func (c *CounterVec) WithLabelValues(values ...string) *Counter { return c.v.get(values) }

// GaugeVec is a gauge per combination of label values.
type GaugeVec struct{ v *vec[*Gauge] }

// WithLabelValues returns the gauge of these label values.
func (g *GaugeVec) WithLabelValues(values ...string) *Gauge { return g.v.get(values) }

type vecFamily[T any] struct {
	opts  Opts
	typ   string
	v     *vec[T]
	value func(T) float64
}

func (f vecFamily[T]) name() string { return f.opts.FullName() }
func (f vecFamily[T]) write(w *bufio.Writer) {
	writeHeader(w, f.name(), f.opts.Help, f.typ)
	for _, c := range f.v.sorted() {
		writeSample(w, f.name(), f.v.labels, c.values, f.value(c.metric))
	}
}

// NewCounterVec creates a labelled counter family on r (r may be nil).
func (r *Registry) NewCounterVec(opts Opts, labels ...string) *CounterVec {
	v := newVec(labels, func() *Counter { return &Counter{} })
	r.register(vecFamily[*Counter]{opts: opts, typ: "counter", v: v, value: (*Counter).Value})
	return &CounterVec{v: v}
}

// NewGaugeVec creates a labelled gauge family on r (r may be nil).
func (r *Registry) NewGaugeVec(opts Opts, labels ...string) *GaugeVec {
	v := newVec(labels, func() *Gauge { return &Gauge{} })
	r.register(vecFamily[*Gauge]{opts: opts, typ: "gauge", v: v, value: (*Gauge).Value})
	return &GaugeVec{v: v}
}

// NewGaugeFunc exposes a value computed at scrape time.
func (r *Registry) NewGaugeFunc(opts Opts, f func() float64) {
	r.register(scalarFamily{opts: opts, typ: "gauge", get: f})
}
