package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/termsafe"
	"github.com/settdev/sett/internal/textcut"
)

// artefactView is everything `sett hoard ID` shows about one artefact; it
// is also its JSON form (-o jsonl).
type artefactView struct {
	Artefact *blackboard.Artefact `json:"artefact"`
	// Thread lists every version of the artefact's thread, oldest first.
	Thread []threadEntry `json:"thread"`
	// Claim is the artefact's regular claim (nil when it has none:
	// reviews, failures, or not claimed yet).
	Claim *blackboard.Claim `json:"claim"`
	// FeedbackClaim reworks this artefact after its claim's rejection.
	FeedbackClaim *blackboard.Claim `json:"feedback_claim,omitempty"`
	// ProducedUnder is the claim whose grant produced the artefact.
	ProducedUnder *blackboard.Claim `json:"produced_under,omitempty"`
	// Sources are the artefacts it was derived from (nil when missing).
	Sources []*blackboard.Artefact `json:"-"`
	// Results are what agents delivered for its claims (reviews, parallel
	// and exclusive work, the rework), oldest first.
	Results   []*blackboard.Artefact `json:"-"`
	ResultIDs []string               `json:"result_ids,omitempty"`
	Workflow  *blackboard.Workflow   `json:"workflow,omitempty"`
}

// threadEntry is one version of a thread.
type threadEntry struct {
	ID          string `json:"id"`
	Version     int    `json:"version"`
	CreatedAtMs int64  `json:"created_at_ms"`
	Summary     string `json:"summary,omitempty"`
}

// loadArtefactView reads an artefact with its thread, claims, sources,
// results and workflow: a fixed number of round trips whatever the size
// of the instance or the workflow.
func loadArtefactView(ctx context.Context, bb *blackboard.Client, id string) (*artefactView, error) {
	a, err := bb.GetArtefact(ctx, id)
	if err != nil {
		return nil, notFoundHint(err, id)
	}
	v := &artefactView{Artefact: a}
	thread, err := bb.Thread(ctx, a.LogicalID)
	if err != nil {
		return nil, err
	}
	for _, t := range thread {
		v.Thread = append(v.Thread, threadEntry{ID: t.ID, Version: t.Version, CreatedAtMs: t.CreatedAtMs, Summary: t.Summary})
	}
	getClaim := func(claimID string) (*blackboard.Claim, error) {
		c, err := bb.GetClaim(ctx, claimID)
		if errors.Is(err, blackboard.ErrNotFound) {
			return nil, nil
		}
		return c, err
	}
	if claimID, err := bb.ClaimForArtefact(ctx, a.ID); err == nil {
		if v.Claim, err = getClaim(claimID); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, blackboard.ErrNotFound) {
		return nil, err
	}
	if v.Claim != nil && v.Claim.FeedbackClaimID != "" {
		if v.FeedbackClaim, err = getClaim(v.Claim.FeedbackClaimID); err != nil {
			return nil, err
		}
	}
	if a.ClaimID != "" {
		if v.ProducedUnder, err = getClaim(a.ClaimID); err != nil {
			return nil, err
		}
	}
	if v.Sources, err = bb.GetArtefacts(ctx, a.SourceArtefacts); err != nil {
		return nil, err
	}
	var claimIDs []string
	for _, c := range []*blackboard.Claim{v.Claim, v.FeedbackClaim} {
		if c != nil {
			claimIDs = append(claimIDs, c.ID)
		}
	}
	outputs, err := bb.ClaimOutputs(ctx, claimIDs)
	if err != nil {
		return nil, err
	}
	for _, out := range outputs {
		for _, rid := range out {
			v.ResultIDs = append(v.ResultIDs, rid)
		}
	}
	if v.Results, err = bb.GetArtefacts(ctx, v.ResultIDs); err != nil {
		return nil, err
	}
	v.Results = slices.DeleteFunc(v.Results, func(r *blackboard.Artefact) bool { return r == nil })
	// Results were gathered in causal order (the claim's outputs, then its
	// rework's); a stable sort by time keeps that order for artefacts
	// written in the same millisecond, where an ID tie-break would put a
	// rework before the review that asked for it.
	slices.SortStableFunc(v.Results, func(x, y *blackboard.Artefact) int {
		return cmp.Compare(x.CreatedAtMs, y.CreatedAtMs)
	})
	v.ResultIDs = v.ResultIDs[:0]
	for _, r := range v.Results {
		v.ResultIDs = append(v.ResultIDs, r.ID)
	}
	if wf, err := bb.GetWorkflow(ctx, a.WorkflowID); err == nil {
		v.Workflow = wf
	}
	return v, nil
}

// showArtefact prints one artefact readably (table) or as one JSON line.
func showArtefact(ctx context.Context, w io.Writer, style outputStyle, bb *blackboard.Client, id, format string) error {
	v, err := loadArtefactView(ctx, bb, id)
	if err != nil {
		return err
	}
	switch format {
	case "jsonl":
		return writeJSON(w, v)
	case "json":
		return writeJSONIndent(w, v)
	}
	renderArtefactView(w, style, v)
	return nil
}

// renderArtefactView prints the human view of one artefact.
func renderArtefactView(w io.Writer, style outputStyle, v *artefactView) {
	a := v.Artefact
	now := style.Now()
	title := fmt.Sprintf("%s %s", a.Type, a.ID)
	fmt.Fprintln(w, style.paint(structTitleColour(a.StructuralType), title))

	t := newTable(w, style)
	kv := func(k, val string) { t.row(cell{text: "  " + k}, cell{text: val}) }
	kv("structural type", string(a.StructuralType))
	kv("version", fmt.Sprintf("v%d of thread %s (%d version(s))", a.Version, a.LogicalID, len(v.Thread)))
	wfText := a.WorkflowID
	if a.IsGoal() {
		wfText += " (this goal starts it)"
	}
	if v.Workflow != nil {
		wfText += " — " + string(v.Workflow.Status)
		if v.Workflow.Outcome != "" {
			wfText += ": " + v.Workflow.Outcome
		}
	}
	kv("workflow", wfText)
	prod := a.ProducedByRole
	if a.ProducedByAgent != "" && a.ProducedByAgent != a.ProducedByRole {
		prod = a.ProducedByAgent + " (role " + a.ProducedByRole + ")"
	}
	if a.ClaimID != "" {
		prod += " under claim " + a.ClaimID
		if v.ProducedUnder != nil {
			prod += " (" + grantKindOf(v.ProducedUnder, a) + ")"
		}
	}
	kv("produced by", prod)
	kv("created", stamp(now, msTime(a.CreatedAtMs)))
	kv("depth", fmt.Sprint(a.Depth))
	if a.IsGoal() {
		kv("score", fmt.Sprint(a.Priority))
	}
	kv("summary", oneLine(a.Summary))
	if a.StructuralType == blackboard.StructuralReview {
		kv("verdict", verdictText(a))
	}
	for i, id := range a.SourceArtefacts {
		k := ""
		if i == 0 {
			k = "sources"
		}
		kv(k, describeRef(id, v.Sources[i]))
	}
	for i, r := range v.Results {
		k := ""
		if i == 0 {
			k = "results"
		}
		kv(k, describeRef(r.ID, r)+"  by "+producer(r))
	}
	keys := make([]string, 0, len(a.Metadata))
	for k := range a.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		label := ""
		if i == 0 {
			label = "metadata"
		}
		kv(label, k+": "+oneLine(a.Metadata[k]))
	}
	_ = t.flush()

	fmt.Fprintf(w, "\n%s\n", style.paint(colourBold, fmt.Sprintf("Payload (%d bytes)", len(a.Payload))))
	payload := termsafe.String(prettyPayload(a.Payload))
	fmt.Fprint(w, payload)
	if !strings.HasSuffix(payload, "\n") {
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "\n%s\n", style.paint(colourBold, fmt.Sprintf("Thread %s", blackboard.ShortID(a.LogicalID))))
	tt := newTable(w, style)
	for i, e := range v.Thread {
		mark := "  "
		if e.ID == a.ID {
			mark = "▸ "
		}
		arrow := ""
		if i > 0 {
			arrow = "→ "
		}
		tt.row(cell{text: mark + arrow + fmt.Sprintf("v%d", e.Version)}, cell{text: blackboard.ShortID(e.ID), colour: colourCyan},
			cell{text: age(now, msTime(e.CreatedAtMs)) + " ago"}, cell{text: textcut.Runes(oneLine(e.Summary), 70)})
	}
	_ = tt.flush()

	fmt.Fprintln(w)
	if v.Claim == nil {
		reason := "not claimed yet"
		if !a.StructuralType.Claimable() {
			reason = string(a.StructuralType) + " artefacts get no claim"
		}
		fmt.Fprintf(w, "%s %s\n", style.paint(colourBold, "Claim"), reason)
	} else {
		renderClaim(w, style, "Claim", v.Claim)
	}
	if c := v.FeedbackClaim; c != nil {
		renderClaim(w, style, fmt.Sprintf("Feedback claim (iteration %d)", c.Iteration), c)
	}
}

// renderClaim prints a claim's status, outcome and grants.
func renderClaim(w io.Writer, style outputStyle, label string, c *blackboard.Claim) {
	now := style.Now()
	fmt.Fprintf(w, "%s %s: %s\n", style.paint(colourBold, label), c.ID, style.paint(claimColour(c.Status), string(c.Status)))
	t := newTable(w, style)
	kv := func(k, val string) { t.row(cell{text: "  " + k}, cell{text: val}) }
	if c.TerminationReason != "" {
		kv("termination", c.TerminationReason)
	}
	if c.CompletionReason != "" {
		kv("completion", reasonForPeople(c.CompletionReason))
	}
	if g := grantsText(c); g != "" {
		kv("granted", g)
	}
	if len(c.AdditionalContextIDs) > 0 {
		kv("feedback from", strings.Join(c.AdditionalContextIDs, ", "))
	}
	if c.ParentClaimID != "" {
		kv("reworks claim", c.ParentClaimID)
	}
	if c.FeedbackClaimID != "" {
		kv("feedback claim", c.FeedbackClaimID)
	}
	kv("iteration", fmt.Sprintf("%d · attempts %d · score %d", c.Iteration, c.Attempts, c.Priority))
	kv("created", stamp(now, msTime(c.CreatedAtMs)))
	if c.UpdatedAtMs > 0 {
		kv("updated", stamp(now, msTime(c.UpdatedAtMs)))
	}
	_ = t.flush()
}

// grantsText lists who a claim granted what: "review: a, b · exclusive: c".
func grantsText(c *blackboard.Claim) string {
	var parts []string
	if len(c.GrantedReviewAgents) > 0 {
		parts = append(parts, "review: "+strings.Join(c.GrantedReviewAgents, ", "))
	}
	if len(c.GrantedParallelAgents) > 0 {
		parts = append(parts, "parallel: "+strings.Join(c.GrantedParallelAgents, ", "))
	}
	if c.GrantedExclusiveAgent != "" {
		kind := "exclusive"
		if c.IsFeedback() {
			kind = "rework"
		}
		parts = append(parts, kind+": "+c.GrantedExclusiveAgent)
	}
	return strings.Join(parts, " · ")
}

// grantKindOf says in which role the producer of a worked under claim c.
func grantKindOf(c *blackboard.Claim, a *blackboard.Artefact) string {
	agent := a.ProducedByAgent
	switch {
	case c.IsFeedback():
		return "rework"
	case slices.Contains(c.GrantedReviewAgents, agent):
		return "review"
	case slices.Contains(c.GrantedParallelAgents, agent):
		return "parallel"
	case c.GrantedExclusiveAgent == agent && agent != "":
		return "exclusive"
	}
	return "orchestrator"
}

// describeRef renders a referenced artefact: "2b3c4d5e  Plan v1  first plan".
func describeRef(id string, a *blackboard.Artefact) string {
	if a == nil {
		return blackboard.ShortID(id) + "  (missing)"
	}
	return fmt.Sprintf("%s  %s v%d  %s", blackboard.ShortID(id), a.Type, a.Version, textcut.Runes(oneLine(a.Summary), 60))
}

// prettyPayload indents JSON payloads; anything else is shown as it is.
func prettyPayload(p string) string {
	trimmed := strings.TrimSpace(p)
	if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
		var b bytes.Buffer
		if json.Valid([]byte(trimmed)) && json.Indent(&b, []byte(trimmed), "", "  ") == nil {
			return b.String()
		}
	}
	return p
}

// claimColour colours a claim status: complete green, terminated red,
// pending yellow.
func claimColour(s blackboard.ClaimStatus) colour {
	switch s {
	case blackboard.ClaimComplete:
		return colourGreen
	case blackboard.ClaimTerminated:
		return colourRed
	}
	return colourYellow
}

// structTitleColour colours an artefact title by its structural type.
func structTitleColour(s blackboard.StructuralType) colour {
	if c := structColour(s); c != colourNone {
		return c
	}
	return colourBold
}
