package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/settdev/sett/pkg/blackboard"
)

// keepAlive is how often an idle event stream sends a comment, so
// proxies do not close it.
const keepAlive = 15 * time.Second

// change is what the event stream pushes: which workflow changed and how.
type change struct {
	Type     string `json:"type"`
	Workflow string `json:"workflow,omitempty"`
}

// events streams changes as server-sent events, read from the instance's
// audit stream from the moment the page connected (or from the browser's
// Last-Event-ID after a reconnect).
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "500 internal error: streaming unsupported by this server", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	after := r.Header.Get("Last-Event-ID")
	if after == "" {
		id, err := c.bb.LastEventID(ctx)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		after = id
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()
	for ctx.Err() == nil {
		evs, err := c.bb.ReadEvents(ctx, after, 200, keepAlive)
		if err != nil {
			if ctx.Err() == nil {
				c.o.Logger.Warn().Err(err).Msg("console: read events")
			}
			return
		}
		if len(evs) == 0 {
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
			continue
		}
		for _, e := range evs {
			after = e.StreamID
			if !pushed(e.Type) {
				continue
			}
			b, _ := json.Marshal(change{Type: string(e.Type), Workflow: e.WorkflowID})
			fmt.Fprintf(w, "id: %s\ndata: %s\n\n", e.StreamID, b)
		}
		// The id moves on even when nothing was pushed, so a reconnect
		// does not replay what was skipped.
		fmt.Fprintf(w, "id: %s\n: moved\n\n", after)
		fl.Flush()
	}
}

// pushed selects the events a page may want to redraw on.
func pushed(t blackboard.EventType) bool {
	switch t {
	case blackboard.EventBidSubmitted, blackboard.EventAgentRegistered, blackboard.EventLeaderElected:
		return false
	}
	return true
}
