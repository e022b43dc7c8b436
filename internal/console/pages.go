package console

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
)

// pageSize is the number of workflows a list page shows.
const pageSize = 50

// Frame is what every page's layout needs.
type Frame struct {
	Title    string
	Nav      string
	Instance string
	CSRF     string
	Actor    string
	Paused   bool
	Waiting  int64
	Error    string
	Notice   string
	// Since is the newest event when the page's data was read.
	Since string
	// Live names the event filter the page's script refreshes on: "*"
	// for every workflow change, a workflow id for one workflow, "" for
	// none.
	Live string
}

func (c *Console) frame(r *http.Request, title, nav string) Frame {
	f := Frame{Title: title, Nav: nav, Instance: c.bb.Instance(), CSRF: c.csrfToken(sessionOf(r.Context())), Actor: c.actor(r)}
	type counts struct {
		paused  bool
		waiting int64
		since   string
	}
	n, _ := get(c.cache, "frame", func() (counts, error) {
		var n counts
		// First, so that the page's data is no older than it: a change
		// after it makes the page's event stream redraw the page at once.
		since, err := c.bb.LastEventID(r.Context())
		if err != nil {
			return n, err
		}
		n.since = since
		ps, err := c.bb.GetPauseState(r.Context())
		if err != nil {
			return n, err
		}
		n.paused = ps.Paused
		n.waiting, err = c.bb.CountApprovals(r.Context())
		return n, err
	})
	f.Paused, f.Waiting, f.Since = n.paused, n.waiting, n.since
	return f
}

// render executes a template into a buffer first so that a failure
// half-way never sends half a page.
func (c *Console) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := c.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		c.o.Logger.Error().Err(err).Str("template", name).Msg("console: render")
		http.Error(w, "500 internal error: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail answers with an error page: 404 for what does not exist, 400 for
// bad input, 500 (logged) for the rest.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, blackboard.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, blackboard.ErrInvalid):
		status = http.StatusBadRequest
	case errors.Is(err, context.Canceled):
		return
	default:
		c.o.Logger.Error().Err(err).Str("path", r.URL.Path).Msg("console: request failed")
	}
	f := c.frame(r, "Error", "")
	f.Error = err.Error()
	c.render(w, status, "error.html", struct{ Frame }{f})
}

// wfRow is one workflow of the list, with its current phase.
type wfRow struct {
	*blackboard.Workflow
	Phase   string
	Waiting string
}

type listView struct {
	Frame
	Rows     []wfRow
	Status   string
	Q        string
	Agent    string
	Type     string
	Cursor   string
	Next     string
	Statuses []blackboard.WorkflowStatus
	Examined int
	// AgentNames and TypeNames are the registered agents and the types
	// they consume: the filters' suggestions.
	AgentNames, TypeNames []string
	// Filter is the query string of the filters, for the pager's links.
	Filter template.URL
}

func (c *Console) listView(r *http.Request) (listView, error) {
	q := r.URL.Query()
	v := listView{Frame: c.frame(r, "Workflows", "workflows"), Status: q.Get("status"), Q: strings.TrimSpace(q.Get("q")),
		Agent: strings.TrimSpace(q.Get("agent")), Type: strings.TrimSpace(q.Get("type")),
		Cursor: q.Get("cursor"), Statuses: blackboard.AllWorkflowStatuses()}
	v.Live = "*"
	v.Filter = template.URL(url.Values{"status": {v.Status}, "q": {v.Q}, "agent": {v.Agent}, "type": {v.Type}}.Encode())
	if regs, err := c.bb.Agents(r.Context()); err == nil {
		types := map[string]bool{}
		for n, reg := range regs {
			v.AgentNames = append(v.AgentNames, n)
			for _, t := range reg.Consumes {
				types[t] = true
			}
		}
		for t := range types {
			v.TypeNames = append(v.TypeNames, t)
		}
		sort.Strings(v.AgentNames)
		sort.Strings(v.TypeNames)
	}
	type page struct {
		rows     []wfRow
		next     string
		examined int
	}
	pg, err := get(c.cache, "list?"+string(v.Filter)+"&cursor="+v.Cursor, func() (page, error) {
		var pg page
		p, err := c.bb.ListWorkflowPage(r.Context(), blackboard.WorkflowQuery{Status: blackboard.WorkflowStatus(v.Status),
			Text: v.Q, Agent: v.Agent, Type: v.Type, Limit: pageSize, Cursor: v.Cursor})
		if err != nil {
			return pg, err
		}
		pg.next, pg.examined = p.Next, p.Examined
		for _, w := range p.Workflows {
			row := wfRow{Workflow: w}
			if w.Status == blackboard.WorkflowRunning {
				row.Phase, row.Waiting, err = c.phaseOf(r.Context(), w.ID)
				if err != nil {
					return pg, err
				}
			}
			pg.rows = append(pg.rows, row)
		}
		return pg, nil
	})
	if err != nil {
		return v, err
	}
	v.Rows, v.Next, v.Examined = pg.rows, pg.next, pg.examined
	return v, nil
}

// phaseOf names what a running workflow's open claims are doing and what
// they wait for.
func (c *Console) phaseOf(ctx context.Context, workflowID string) (phase, waiting string, err error) {
	ids, err := c.bb.WorkflowClaims(ctx, workflowID)
	if err != nil {
		return "", "", err
	}
	claims, err := c.bb.GetClaims(ctx, ids)
	if err != nil {
		return "", "", err
	}
	var phases, waits []string
	for _, cl := range claims {
		if cl == nil || cl.Status.Final() {
			continue
		}
		phases = appendNew(phases, string(cl.Status))
		switch {
		case cl.Status == blackboard.ClaimPendingApproval:
			waits = appendNew(waits, "approval")
		case cl.WaitingReason != "":
			waits = appendNew(waits, cl.WaitingReason)
		}
	}
	return strings.Join(phases, ", "), strings.Join(waits, ", "), nil
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func (c *Console) listPage(w http.ResponseWriter, r *http.Request) {
	v, err := c.listView(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, http.StatusOK, "list.html", v)
}

// listRows is the list's table body alone, for the live refresh.
func (c *Console) listRows(w http.ResponseWriter, r *http.Request) {
	v, err := c.listView(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, http.StatusOK, "rows", v)
}

// approvalItem is one waiting approval with the payload shown.
type approvalItem struct {
	blackboard.ApprovalRequest
	Payload string
	Goal    string
}

type approvalsView struct {
	Frame
	Items []approvalItem
}

func (c *Console) approvalsView(r *http.Request) (approvalsView, error) {
	v := approvalsView{Frame: c.frame(r, "Approvals", "approvals")}
	v.Live = "*"
	reqs, err := c.bb.PendingApprovals(r.Context())
	if err != nil {
		return v, err
	}
	ids := make([]string, len(reqs))
	for i, q := range reqs {
		ids[i] = q.ArtefactID
	}
	arts, err := c.bb.GetArtefacts(r.Context(), ids)
	if err != nil {
		return v, err
	}
	for i, q := range reqs {
		it := approvalItem{ApprovalRequest: q}
		if arts[i] != nil {
			it.Payload = cutBytes(arts[i].Payload, 4000)
		}
		v.Items = append(v.Items, it)
	}
	return v, nil
}

func (c *Console) approvalsPage(w http.ResponseWriter, r *http.Request) {
	v, err := c.approvalsView(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, http.StatusOK, "approvals.html", v)
}

// cutBytes cuts s to at most n bytes at a rune boundary, marking the cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "\n… (cut; the whole payload is on the artefact's page)"
}

// agentRow is one registered agent on the control page.
type agentRow struct {
	blackboard.Registration
	Live    bool
	TTLms   int64
	Running int64
	Queued  int
}

type controlView struct {
	Frame
	Pause       blackboard.PauseState
	Counts      blackboard.SchedulerCounts
	Queue       []blackboard.WaitingClaim
	DeadLetters []blackboard.DeadLetter
	Agents      []agentRow
	Learnings   []blackboard.Learning
}

func (c *Console) controlPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v := controlView{Frame: c.frame(r, "Control", "control")}
	v.Live = "*"
	var err error
	if v.Pause, err = c.bb.GetPauseState(ctx); err != nil {
		c.fail(w, r, err)
		return
	}
	if v.Counts, err = c.bb.CountScheduler(ctx); err != nil {
		c.fail(w, r, err)
		return
	}
	if v.Queue, err = c.bb.WaitingClaims(ctx, 100); err != nil {
		c.fail(w, r, err)
		return
	}
	if v.DeadLetters, err = c.bb.DeadLetters(ctx, 50); err != nil {
		c.fail(w, r, err)
		return
	}
	regs, err := c.bb.Agents(ctx)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	names := make([]string, 0, len(regs))
	for n := range regs {
		names = append(names, n)
	}
	sort.Strings(names)
	live, err := c.bb.AgentLiveness(ctx, names)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	queues, running, err := c.bb.AgentQueues(ctx, names)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for _, n := range names {
		ttl, ok := live[n]
		v.Agents = append(v.Agents, agentRow{Registration: regs[n], Live: ok, TTLms: ttl.Milliseconds(),
			Running: running[n], Queued: len(queues[n])})
	}
	if v.Learnings, err = c.bb.Learnings(ctx); err != nil {
		c.fail(w, r, err)
		return
	}
	if len(v.Learnings) > 100 {
		v.Learnings = v.Learnings[len(v.Learnings)-100:]
	}
	c.render(w, http.StatusOK, "control.html", v)
}
