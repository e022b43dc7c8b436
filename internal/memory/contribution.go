package memory

import (
	"cmp"
	"slices"
	"strings"
)

// Contribution is one agent memory offered to Merge: the memory an agent
// returned with one artefact.
type Contribution struct {
	// ID identifies the contribution for idempotency: the id of the
	// artefact whose memory it is. A contribution with an empty ID is
	// skipped, since it could never be recognised again.
	ID string
	// Agent is the name of the agent that wrote the memory.
	Agent string
	// Step is a short label for where in the workflow the memory was
	// written, such as "review" or "iteration 2"; may be empty.
	Step string
	// CreatedAtMs orders contributions within a batch (the artefact's
	// created_at_ms); 0 when unknown.
	CreatedAtMs int64
	// Memory is the agent's memory, as ParseAgentMemory returned it.
	Memory AgentMemory
}

// Compare orders contributions for Merge: by CreatedAtMs, then Agent,
// then Step, then ID. It returns -1, 0 or +1 as c sorts before, with or
// after o; it is a total order on contributions with distinct IDs, so a
// batch merges the same way whatever order it arrives in.
func (c Contribution) Compare(o Contribution) int {
	return cmp.Or(
		cmp.Compare(c.CreatedAtMs, o.CreatedAtMs),
		cmp.Compare(c.Agent, o.Agent),
		cmp.Compare(c.Step, o.Step),
		cmp.Compare(c.ID, o.ID),
	)
}

// Merge applies the memory and review design's merge sequence to every contribution of batch
// that shared has not merged before, in the order of Contribution.Compare,
// and returns the new shared memory and whether anything changed. shared
// itself is not modified.
//
// For each contribution:
//  1. each artifact index entry updates the row of its path in the
//     Artifact Index (created at the end when new; otherwise its new
//     sections are added after the known ones, its note replaces the
//     row's when not empty, and the row moves to the end as the most
//     recently updated), and the row is marked "agent, step";
//  2. each decision becomes an entry of Recent Decisions;
//  3. one entry of Recent Updates says the status, the severity and the
//     summary (or, without one, the key findings joined by "; ");
//  4. when the agent's previous merged memory was NEEDS_REVISION or ERROR
//     and this one is DONE, Lessons Learned gets "issue (status, severity,
//     at step) → resolution", the issue and the resolution being the
//     summary, else the first key finding, else the first decision, of the
//     two memories.
//
// Then Recent Decisions, Recent Updates and the Artifact Index are cut to
// their bounds (MaxRecentDecisions, MaxRecentUpdates, MaxArtifactRows),
// dropping the oldest; Lessons Learned is never cut.
//
// Merge is idempotent: a contribution whose ID was merged before, or that
// repeats an ID earlier in the batch, changes nothing, and when nothing
// changes Merge returns shared as it is and false. Merging the same batch
// twice therefore gives byte-identical Encode output.
func Merge(shared SharedMemory, batch []Contribution) (SharedMemory, bool) {
	unmerged := make([]Contribution, 0, len(batch))
	for _, c := range batch {
		if c.ID != "" && !hasSorted(shared.MergedIDs, c.ID) {
			unmerged = append(unmerged, c)
		}
	}
	if len(unmerged) == 0 {
		return shared, false
	}
	slices.SortStableFunc(unmerged, Contribution.Compare)

	out := shared.clone()
	for _, c := range unmerged {
		if hasSorted(out.MergedIDs, c.ID) {
			continue // the same ID twice in one batch
		}
		out.apply(c)
		out.MergedIDs = insertSorted(out.MergedIDs, c.ID)
	}
	out.prune()
	return out, true
}

// apply merges one contribution.
func (s *SharedMemory) apply(c Contribution) {
	agent, step, m := oneLine(c.Agent), oneLine(c.Step), c.Memory
	by := agent
	if step != "" {
		by += ", " + step
	}

	for _, e := range m.ArtifactIndex {
		s.touchArtifact(e, by)
	}
	for _, d := range m.Decisions {
		s.RecentDecisions = append(s.RecentDecisions, Entry{Agent: agent, Step: step, Text: cut(d, maxEntryLen)})
	}
	s.RecentUpdates = append(s.RecentUpdates, Entry{Agent: agent, Step: step, Text: cut(updateText(m), maxEntryLen)})

	prev, seen := s.Agents[agent]
	wasWrong := prev.Status == StatusNeedsRevision || prev.Status == StatusError
	if seen && wasWrong && m.Status == StatusDone {
		lesson := prev.Issue + " → " + cmp.Or(gist(m), "resolved")
		s.LessonsLearned = append(s.LessonsLearned, Entry{Agent: agent, Step: step, Text: cut(lesson, maxEntryLen)})
	}
	st := AgentState{Status: m.Status, Step: step}
	if m.Status != StatusDone {
		st.Issue = issueText(m, step)
	}
	if s.Agents == nil {
		s.Agents = make(map[string]AgentState)
	}
	s.Agents[agent] = st
}

// touchArtifact updates (or adds) the row of e's path and makes it the
// most recently updated.
func (s *SharedMemory) touchArtifact(e ArtifactEntry, by string) {
	i := slices.IndexFunc(s.ArtifactIndex, func(r ArtifactRow) bool { return r.Path == e.Path })
	row := ArtifactRow{Path: e.Path}
	if i >= 0 {
		row = s.ArtifactIndex[i]
		s.ArtifactIndex = slices.Delete(s.ArtifactIndex, i, i+1)
	}
	for _, sec := range e.Sections {
		if !slices.Contains(row.Sections, sec) {
			row.Sections = append(row.Sections, sec)
		}
	}
	if e.Note != "" {
		row.Note = e.Note
	}
	row.UpdatedBy = by
	s.ArtifactIndex = append(s.ArtifactIndex, row)
}

// statusLabel is "STATUS" or "STATUS, severity".
func statusLabel(m AgentMemory) string {
	if sev := m.HighestSeverity; sev != "" && !strings.EqualFold(sev, notApplicable) {
		return string(m.Status) + ", " + sev
	}
	return string(m.Status)
}

// updateText is the Recent Updates text for m: "STATUS (severity): summary".
func updateText(m AgentMemory) string {
	head := string(m.Status)
	if l := statusLabel(m); l != head {
		head += " (" + strings.TrimPrefix(l, head+", ") + ")"
	}
	body := m.Summary
	if body == "" {
		body = strings.Join(m.KeyFindings, "; ")
	}
	if body == "" {
		return head
	}
	return head + ": " + body
}

// gist is the one text that best says what m is about.
func gist(m AgentMemory) string {
	switch {
	case m.Summary != "":
		return m.Summary
	case len(m.KeyFindings) > 0:
		return m.KeyFindings[0]
	case len(m.Decisions) > 0:
		return m.Decisions[0]
	}
	return ""
}

// issueText describes a memory that is not DONE, for a later lesson:
// "gist (STATUS, severity, at step)".
func issueText(m AgentMemory, step string) string {
	label := statusLabel(m)
	if step != "" {
		label += ", at " + step
	}
	if g := gist(m); g != "" {
		return g + " (" + label + ")"
	}
	return label
}
