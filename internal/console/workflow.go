package console

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/provenance"
)

// Bounds of one workflow page.
const (
	maxArtefacts = 2000 // artefacts read for the graph
	maxEvents    = 2000 // events read for the timeline
)

type threadView struct {
	LogicalID string
	Type      string
	Versions  []*blackboard.Artefact
}

type eventRow struct {
	blackboard.Event
	Detail string
}

type tokenRow struct {
	Agent  string
	Tokens int64
}

type memoryRow struct {
	Agent, Memory string
	AtMs          int64
}

type workflowView struct {
	Frame
	W         *blackboard.Workflow
	Graph     graph
	Claims    []*blackboard.Claim
	Learnings []blackboard.Learning
	Prov      *provenance.Workflow
	Threads   []threadView
	Events    []eventRow
	EventsCut bool
	Tokens    []tokenRow
	Shared    string
	Memories  []memoryRow
	Artefacts int
	Truncated bool
	GoalText  string
}

func (c *Console) workflowPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	if err := blackboard.ValidateID(id); err != nil {
		c.fail(w, r, err)
		return
	}
	p, err := provenance.Load(ctx, c.bb, id, provenance.Options{MaxArtefacts: maxArtefacts, Bids: true, Learnings: true})
	if err != nil {
		c.fail(w, r, err)
		return
	}
	wf := p.WF
	v := workflowView{Frame: c.frame(r, "Workflow "+blackboard.ShortID(id), "workflows"), W: wf}
	v.Live = id
	v.Artefacts, v.Truncated = len(p.Arts), p.Truncated
	v.Claims, v.Learnings, v.Prov = p.ClaimList, p.Learnings, p
	v.Graph = layoutGraph(p)
	if g := p.ByID[id]; g != nil {
		v.GoalText = g.Payload
	}
	for _, lid := range p.ThreadOrder {
		if vs := p.Threads[lid]; len(vs) > 1 {
			v.Threads = append(v.Threads, threadView{LogicalID: lid, Type: vs[0].Type, Versions: vs})
		}
	}
	if v.Events, v.EventsCut, err = c.workflowEvents(ctx, wf); err != nil {
		c.fail(w, r, err)
		return
	}
	for a, n := range wf.AgentTokens {
		v.Tokens = append(v.Tokens, tokenRow{a, n})
	}
	sort.Slice(v.Tokens, func(i, j int) bool { return v.Tokens[i].Agent < v.Tokens[j].Agent })
	if v.Shared, _, err = c.bb.GetSharedMemory(ctx, id); err != nil {
		c.fail(w, r, err)
		return
	}
	mems, err := c.bb.AgentMemories(ctx, id)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for a, m := range mems {
		v.Memories = append(v.Memories, memoryRow{Agent: a, Memory: m.Memory, AtMs: m.AtMs})
	}
	sort.Slice(v.Memories, func(i, j int) bool { return v.Memories[i].Agent < v.Memories[j].Agent })
	c.render(w, http.StatusOK, "workflow.html", v)
}

// workflowEvents reads the workflow's events from the audit stream
// between its start and its end (bounded by maxEvents read).
func (c *Console) workflowEvents(ctx context.Context, wf *blackboard.Workflow) ([]eventRow, bool, error) {
	start := strconv.FormatInt(max(wf.StartedAtMs-1000, 0), 10) + "-0"
	end := "+"
	if wf.EndedAtMs > 0 {
		end = strconv.FormatInt(wf.EndedAtMs+5000, 10) + "-0"
	}
	evs, err := c.bb.RangeEvents(ctx, start, end, maxEvents)
	if err != nil {
		return nil, false, err
	}
	var out []eventRow
	for _, e := range evs {
		if e.WorkflowID != wf.ID {
			continue
		}
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			if strings.HasSuffix(k, "_channel") {
				continue
			}
			parts = append(parts, k+"="+ellipsis(e.Fields[k], 120))
		}
		out = append(out, eventRow{Event: e, Detail: strings.Join(parts, " ")})
	}
	return out, len(evs) == maxEvents, nil
}

type diffView struct {
	Frame
	W        *blackboard.Workflow
	Versions []*blackboard.Artefact
	A, B     *blackboard.Artefact
	Rows     []diffRow
}

// diffPage compares two versions of a thread side by side (?a=ID&b=ID;
// by default the last two versions of ?thread=LOGICAL_ID).
func (c *Console) diffPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	wf, err := c.bb.GetWorkflow(ctx, id)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	thread := q.Get("thread")
	if thread == "" {
		if a, err := c.bb.GetArtefact(ctx, q.Get("a")); err == nil {
			thread = a.LogicalID
		}
	}
	if err := blackboard.ValidateID(thread); err != nil {
		c.fail(w, r, fmt.Errorf("%w: give ?thread=LOGICAL_ID or ?a=ARTEFACT_ID", blackboard.ErrInvalid))
		return
	}
	versions, err := c.bb.Thread(ctx, thread)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v := diffView{Frame: c.frame(r, "Diff", "workflows"), W: wf}
	for _, a := range versions {
		if a != nil && a.WorkflowID == wf.ID {
			v.Versions = append(v.Versions, a)
		}
	}
	if len(v.Versions) == 0 {
		c.fail(w, r, fmt.Errorf("%w: thread %s has no version in workflow %s", blackboard.ErrNotFound, thread, blackboard.ShortID(wf.ID)))
		return
	}
	pick := func(want string, fallback int) *blackboard.Artefact {
		for _, a := range v.Versions {
			if a.ID == want {
				return a
			}
		}
		return v.Versions[max(0, min(fallback, len(v.Versions)-1))]
	}
	v.A, v.B = pick(q.Get("a"), len(v.Versions)-2), pick(q.Get("b"), len(v.Versions)-1)
	v.Rows = sideBySide(v.A.Payload, v.B.Payload)
	c.render(w, http.StatusOK, "diff.html", v)
}

type artefactView struct {
	Frame
	A     *blackboard.Artefact
	Claim *blackboard.Claim
	Meta  []tokenKV
}

type tokenKV struct{ K, V string }

func (c *Console) artefactPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	a, err := c.bb.GetArtefact(ctx, r.PathValue("id"))
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v := artefactView{Frame: c.frame(r, a.Type+" v"+strconv.Itoa(a.Version), "workflows"), A: a}
	if cl, err := c.bb.GetClaim(ctx, blackboard.DeriveID("claim", a.ID)); err == nil {
		v.Claim = cl
	}
	for k, val := range a.Metadata {
		v.Meta = append(v.Meta, tokenKV{k, val})
	}
	sort.Slice(v.Meta, func(i, j int) bool { return v.Meta[i].K < v.Meta[j].K })
	c.render(w, http.StatusOK, "artefact.html", v)
}
