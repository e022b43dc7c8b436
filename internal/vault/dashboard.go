package vault

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/learningsfile"
)

// DashboardData is what Dashboard.md shows.
type DashboardData struct {
	Paused      blackboard.PauseState
	Pending     []PendingItem
	Running     []runningTask
	NeedsAction int
	InProgress  int
	Scheduler   blackboard.SchedulerCounts
	Invalid     []refusal
	Activity    []string
	Updated     time.Time
	// Waiting counts Needs_Action/: settling files are still being
	// written (vault.settle); Paused says ready ones wait for a resume.
	Waiting waitingTasks
	// Warnings are shown on top (the learnings count of
	// Agent_Memory.md, edits noticed).
	Warnings []string
}

// PendingItem is one approval waiting, with its file.
type PendingItem struct {
	Request blackboard.ApprovalRequest
	File    string
}

// RenderDashboard renders Dashboard.md.
func RenderDashboard(d DashboardData) string {
	var s strings.Builder
	s.WriteString("# Sett dashboard\n\n")
	s.WriteString("<!-- Written by Sett from the blackboard; edits are overwritten. `sett vault rebuild` regenerates it. -->\n\n")
	if !d.Updated.IsZero() {
		fmt.Fprintf(&s, "Updated at %s. Sett rewrites this file at least once per vault.rescan_interval while the instance runs: "+
			"an older time means the orchestrator is down (check with `sett status`), and what follows may be stale.\n\n", d.Updated.UTC().Format(time.RFC3339))
	} else {
		s.WriteString("Not updated yet: the orchestrator has not run with this vault (start it with `sett up`).\n\n")
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(&s, "> **Warning:** %s\n\n", mdText(w))
	}
	if d.Paused.Paused {
		fmt.Fprintf(&s, "**PAUSED** since %s by %s: %s\n\n", msTime(d.Paused.SinceMs), mdText(orDash(d.Paused.By)), mdText(orDash(d.Paused.Reason)))
	} else {
		s.WriteString("Running (not paused). Create `.sett_stop` in the vault to pause; delete it to resume.\n\n")
	}
	s.WriteString("## Pending approvals\n\n")
	if len(d.Pending) == 0 {
		s.WriteString("None.\n\n")
	} else {
		s.WriteString("| File | Type | Version | Requested | Expires |\n|---|---|---|---|---|\n")
		for _, p := range d.Pending {
			r := p.Request
			fmt.Fprintf(&s, "| %s | %s | v%d | %s | %s |\n", mdText(p.File), mdText(r.ArtefactType), r.Version, msTime(r.RequestedAtMs), orDash(msTime(r.ExpiresAtMs)))
		}
		s.WriteString("\nTo decide: move the file to `Approved/` or `Rejected/` (with a `reason:`), set `approval_status: approved|rejected` in it, or run `sett approve ID` / `sett reject ID --reason TEXT`.\n\n")
	}
	s.WriteString("## Running workflows\n\n")
	if len(d.Running) == 0 {
		s.WriteString("None.\n\n")
	} else {
		for _, r := range d.Running {
			fmt.Fprintf(&s, "- %s — workflow %s — %s\n", mdText(r.File), blackboard.ShortID(r.WorkflowID), mdText(r.State))
		}
		s.WriteString("\n")
	}
	s.WriteString("## Queues\n\n")
	fmt.Fprintf(&s, "- Needs_Action: %d waiting%s\n- In_Progress: %d\n- Pending approvals: %d\n- Claims running: %d, waiting for capacity: %d\n\n",
		d.NeedsAction, waitingNote(d.Waiting), d.InProgress, len(d.Pending), d.Scheduler.Running, d.Scheduler.Waiting)
	s.WriteString("## Invalid files\n\n")
	s.WriteString("Files Sett leaves alone, and why. Sett reads only Markdown files directly in its folders: " +
		"hidden, temporary and non-Markdown files are not listed, and neither are files in subfolders (listed here as folders).\n\n")
	if len(d.Invalid) == 0 {
		s.WriteString("None.\n\n")
	} else {
		for _, r := range d.Invalid {
			fmt.Fprintf(&s, "- %s: %s\n", mdText(r.Path), mdText(r.Reason))
		}
		s.WriteString("\n")
	}
	s.WriteString("## Recent activity\n\n")
	if len(d.Activity) == 0 {
		s.WriteString("Nothing yet.\n")
	} else {
		for i := len(d.Activity) - 1; i >= 0; i-- {
			fmt.Fprintf(&s, "- %s\n", d.Activity[i])
		}
	}
	return s.String()
}

// waitingNote details the Needs_Action/ count.
func waitingNote(w waitingTasks) string {
	var parts []string
	if w.Settling > 0 {
		parts = append(parts, fmt.Sprintf("%d still being written (read once unchanged for vault.settle)", w.Settling))
	}
	if w.Paused && w.Ready > 0 {
		parts = append(parts, fmt.Sprintf("%d ready, held while paused (on resume they start highest priority first)", w.Ready))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// dashboard rewrites Dashboard.md when what it shows changed.
func (b *Bridge) dashboard(ctx context.Context, pending []blackboard.ApprovalRequest, running []runningTask) error {
	var d DashboardData
	var err error
	if d.Paused, err = b.bb.GetPauseState(ctx); err != nil {
		return err
	}
	if d.Scheduler, err = b.bb.CountScheduler(ctx); err != nil {
		return err
	}
	names := map[string][]string{}
	for _, folder := range approvalFolders {
		names[folder], _ = b.listMD(folder)
	}
	files := approvalFiles(names, pending)
	for _, r := range pending {
		d.Pending = append(d.Pending, PendingItem{Request: r, File: orDash(files[r.ArtefactID])})
	}
	d.Running = running
	na, _ := b.listMD(NeedsAction)
	ip, _ := b.listMD(InProgress)
	d.NeedsAction, d.InProgress = len(na), len(ip)
	for p, why := range b.refused {
		d.Invalid = append(d.Invalid, refusal{Path: b.rel(p), Reason: why})
	}
	sort.Slice(d.Invalid, func(i, j int) bool { return d.Invalid[i].Path < d.Invalid[j].Path })
	b.mu.Lock()
	d.Activity = append([]string(nil), b.activity...)
	b.mu.Unlock()
	d.Waiting = b.waiting
	if w := learningsfile.Warning(b.warned); w != "" {
		d.Warnings = append(d.Warnings, w)
	}
	if w := passWarning(b.passErr); w != "" {
		d.Warnings = append(d.Warnings, w)
	}
	// The text without its time decides whether to write; the time
	// alone is refreshed once per rescan interval, so a reader can tell
	// a live dashboard from a stopped instance's.
	now := b.NowFunc()
	text := RenderDashboard(d)
	// Half the interval: the rescan tick that refreshes it comes a
	// little less than one interval after a write made by a later pass.
	if text == b.lastDash && now.Sub(b.lastDashAt) < b.opt.RescanInterval/2 {
		return nil
	}
	d.Updated = now
	if err := writeAtomic(filepath.Join(b.opt.Path, DashboardFile), []byte(RenderDashboard(d))); err != nil {
		return err
	}
	b.lastDash, b.lastDashAt = text, now
	return nil
}

// approvalFiles finds each pending approval's file among the names of the
// approval folders (folder → names, in approvalFolders' order): the file
// whose name, less ".md", ends with the artefact's short id; with several,
// the last in folder order. It looks the short ids up by suffix instead of
// comparing every file with every approval: with 10 000 approvals pending
// that was 10^8 comparisons per pass.
func approvalFiles(names map[string][]string, pending []blackboard.ApprovalRequest) map[string]string {
	byShort := map[string][]string{}
	lengths := map[int]bool{}
	for _, r := range pending {
		short := blackboard.ShortID(r.ArtefactID)
		byShort[short] = append(byShort[short], r.ArtefactID)
		lengths[len(short)] = true
	}
	files := map[string]string{}
	for _, folder := range approvalFolders {
		for _, n := range names[folder] {
			base := strings.TrimSuffix(n, ".md")
			for l := range lengths {
				if len(base) < l {
					continue
				}
				for _, id := range byShort[base[len(base)-l:]] {
					files[id] = folder + "/" + n
				}
			}
		}
	}
	return files
}
