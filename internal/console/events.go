package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// keepAlive is how often an idle event stream sends a comment, so
// proxies do not close it.
const keepAlive = 15 * time.Second

// gather is how long the reader lets changes gather after a batch before
// it reads again: a hop writes a dozen events within milliseconds, and
// the pages redraw no sooner than 250 ms after a change anyway, so one
// read and one push to every page per gather instead of one per event
// (Redis answers the console a few times a second, not on every write).
const gather = 200 * time.Millisecond

// maxPending bounds the changes held for one slow page; past it they
// collapse into one "resync" (the page redraws once either way).
const maxPending = 500

// change is what the event stream pushes: which workflow changed and how.
type change struct {
	Type     string `json:"type"`
	Workflow string `json:"workflow,omitempty"`
}

// hub reads the instance's audit stream once, however many pages are
// open, and hands each page the changes: one blocking read on Redis for
// all of them instead of one each. It reads only while a page listens.
type hub struct {
	bb   *blackboard.Client
	warn func(error)
	// cache is told when a change arrives and whether the reader runs.
	cache *readCache

	mu   sync.Mutex
	subs map[*listener]struct{}
	stop context.CancelFunc // of the running reader; nil when none runs
}

// listener is one open event stream: the changes not yet written and the
// stream id they reach.
type listener struct {
	wake    chan struct{}
	mu      sync.Mutex
	pending []change
	last    string
}

// take returns the pending changes and the id they reach, emptying them.
func (l *listener) take() ([]change, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, id := l.pending, l.last
	l.pending = nil
	return p, id
}

func (l *listener) add(cs []change, id string) {
	l.mu.Lock()
	switch {
	case len(l.pending) == 1 && l.pending[0].Type == "resync":
	case len(l.pending)+len(cs) > maxPending:
		l.pending = []change{{Type: "resync"}}
	default:
		l.pending = append(l.pending, cs...)
	}
	l.last = id
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// subscribe adds a listener; changes written to the stream after it
// returns reach it. The reader starts with the first listener (from the
// stream's current end) and stops with the last.
func (h *hub) subscribe(ctx context.Context) (*listener, func(), error) {
	l := &listener{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stop == nil {
		after, err := h.bb.LastEventID(ctx)
		if err != nil {
			return nil, nil, err
		}
		rctx, stop := context.WithCancel(context.Background())
		h.stop = stop
		if h.cache != nil {
			h.cache.setLive(true)
		}
		go h.read(rctx, after)
	}
	if h.subs == nil {
		h.subs = map[*listener]struct{}{}
	}
	h.subs[l] = struct{}{}
	return l, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, l)
		if len(h.subs) == 0 && h.stop != nil {
			h.stop()
			h.stop = nil
			if h.cache != nil {
				h.cache.setLive(false)
			}
		}
	}, nil
}

// read follows the stream from after until ctx ends, fanning each batch
// out to the listeners.
func (h *hub) read(ctx context.Context, after string) {
	for ctx.Err() == nil {
		evs, err := h.bb.ReadEvents(ctx, after, 200, keepAlive)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			h.warn(err)
			select { // a Redis outage: try again shortly, pages keep their streams
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		if len(evs) == 0 {
			continue
		}
		var cs []change
		for _, e := range evs {
			after = e.StreamID
			if pushed(e.Type) {
				cs = append(cs, change{Type: string(e.Type), Workflow: e.WorkflowID})
			}
		}
		if len(cs) > 0 && h.cache != nil {
			h.cache.bump() // before the pages hear of it, so they read afresh
		}
		h.mu.Lock()
		for l := range h.subs {
			l.add(cs, after)
		}
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(gather):
		}
	}
}

// events streams changes as server-sent events, from the moment the page
// connected. A page that reconnects (it sends Last-Event-ID) may have
// missed changes: it is told to redraw once.
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "500 internal error: streaming unsupported by this server", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	l, unsubscribe, err := c.hub.subscribe(ctx)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	defer unsubscribe()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	if c.missed(r) {
		fmt.Fprint(w, "data: {\"type\":\"resync\"}\n\n")
	}
	fl.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-l.wake:
			cs, id := l.take()
			for _, ch := range cs {
				b, _ := json.Marshal(ch)
				fmt.Fprintf(w, "data: %s\n\n", b)
			}
			// The id moves on even when nothing was pushed.
			fmt.Fprintf(w, "id: %s\n: moved\n\n", id)
		}
		fl.Flush()
	}
}

// streamID is an event stream id ("1700000000000-0").
var streamID = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// missed reports whether the page may have missed changes before its
// stream started (the listener is already subscribed): it reconnects
// (Last-Event-ID), or an event came after the position it was read at
// (?since=ID, from the page). The page then redraws once.
func (c *Console) missed(r *http.Request) bool {
	if r.Header.Get("Last-Event-ID") != "" {
		return true
	}
	since := r.URL.Query().Get("since")
	if !streamID.MatchString(since) {
		return false
	}
	evs, err := c.bb.RangeEvents(r.Context(), "("+since, "+", 1)
	return err != nil || len(evs) > 0
}

// pushed selects the events a page may want to redraw on.
func pushed(t blackboard.EventType) bool {
	switch t {
	case blackboard.EventBidSubmitted, blackboard.EventAgentRegistered, blackboard.EventLeaderElected:
		return false
	}
	return true
}
