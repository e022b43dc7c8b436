package memory

import "cmp"

// Update is one line the orchestrator adds to Recent Updates, such as the
// record of a review decision.
type Update struct {
	// Key makes the update idempotent: an update whose Key was applied
	// before changes nothing. Use something that names the event, such as
	// "review_decision:<claim id>:<iteration>". Required.
	Key string
	// Agent is shown as the author; empty means "orchestrator".
	Agent string
	// Step is a short label such as "review" or "iteration 2"; may be
	// empty.
	Step string
	// Text is the line itself, folded to one line.
	Text string
}

// AddUpdate adds u to the Recent Updates of shared unless its Key was
// applied before, and returns the new shared memory and whether anything
// changed. Recent Updates is then cut to MaxRecentUpdates, dropping the
// oldest. An update with an empty Key or an empty Text changes nothing.
// shared itself is not modified.
func AddUpdate(shared SharedMemory, u Update) (SharedMemory, bool) {
	text := oneLine(u.Text)
	if u.Key == "" || text == "" || hasSorted(shared.UpdateKeys, u.Key) {
		return shared, false
	}
	out := shared.clone()
	out.RecentUpdates = append(out.RecentUpdates, Entry{
		Agent: cmp.Or(oneLine(u.Agent), "orchestrator"),
		Step:  oneLine(u.Step),
		Text:  cut(text, maxEntryLen),
	})
	out.UpdateKeys = insertSorted(out.UpdateKeys, u.Key)
	out.prune()
	return out, true
}
