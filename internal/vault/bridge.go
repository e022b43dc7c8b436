package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/priority"
)

// Options configure a Bridge (vault in sett.yml, defaults applied).
type Options struct {
	// Path is the vault folder, absolute.
	Path string
	// RescanInterval is the period of the full pass without file events;
	// zero means 30s.
	RescanInterval time.Duration
	// MaxConcurrentTasks bounds the task files in In_Progress/; 0 means
	// no limit.
	MaxConcurrentTasks int
	// MaxFileBytes is the largest file read; zero means 1MiB.
	MaxFileBytes int64
	// Weights score task priorities (orchestrator.priority).
	Weights priority.Weights
	// Settle is how long a task file must stay unchanged (size and
	// modification time) before it is read; zero reads it at once.
	Settle time.Duration
	// Cooldown is the least time between two task starts; zero means
	// none.
	Cooldown time.Duration
	// Learner is set when orchestrator.learner names an agent: it works
	// out the learning of a rejection itself, so a plan moved to
	// Rejected/ needs no reason (seed 000).
	Learner bool
	// ReportFunc is called after every pass of Run with the pass's error
	// (nil when it succeeded), so that a vault Sett cannot write shows in
	// `sett status`, `sett errors` and the metrics. Nil: not reported.
	ReportFunc func(ctx context.Context, err error)
}

// minPassGap spaces full passes woken by blackboard events: a busy
// instance writes many events, and one pass covers them all.
const minPassGap = 50 * time.Millisecond

// maxActivity is how many recent lines Dashboard.md shows.
const maxActivity = 20

// Bridge keeps the vault and the blackboard in step while it runs. Run it on the leading orchestrator only; it is the one writer of
// the vault's projections. A Bridge is not safe for concurrent passes:
// Run serialises them.
type Bridge struct {
	bb  *blackboard.Client
	opt Options
	log zerolog.Logger
	// NowFunc is the clock for scores and timestamps; time.Now unless a
	// test replaces it.
	NowFunc func() time.Time

	mu       sync.Mutex
	activity []string
	merged   map[string]bool // workflows whose memory changed since the last mirror

	refused    map[string]string // path → reason
	memStamp   map[string]string // file → size/mtime last published
	state      *vaultState
	lastDash   string
	lastDashAt time.Time
	warned     int

	settle    *settler
	ours      map[string]stamp // task files as Sett last wrote them
	waiting   waitingTasks
	lastStart time.Time
	// reopened holds the workflows reopened (workflow_reopened events)
	// since the last pass: their task files come back from Failed/.
	reopened map[string]bool
	// finished caches what the files of Failed/, Done/ and
	// Needs_Human_Review/ say; scanFinished asks for a full look at them
	// (first pass, file events there, every rescan).
	finished     map[string]finishedEntry
	scanFinished atomic.Bool
	revivedOnce  bool
	// passErr is the current pass's error before its dashboard.
	passErr error
	// wake is the earliest time a pass is due for a reason no event
	// announces (a file settling, the cooldown ending); zero for none.
	wake time.Time
}

// wakeAt asks for a pass at t (the earliest asked wins).
func (b *Bridge) wakeAt(t time.Time) {
	if b.wake.IsZero() || t.Before(b.wake) {
		b.wake = t
	}
}

// NewBridge returns a bridge for opt.Path writing through bb.
func NewBridge(bb *blackboard.Client, opt Options, log zerolog.Logger) *Bridge {
	if opt.RescanInterval <= 0 {
		opt.RescanInterval = config.DefaultVaultRescanInterval.Std()
	}
	if opt.MaxFileBytes <= 0 {
		opt.MaxFileBytes = config.DefaultVaultMaxFileBytes.Int64()
	}
	b := &Bridge{bb: bb, opt: opt, log: log.With().Str("component", "vault_bridge").Logger(),
		NowFunc: time.Now, merged: map[string]bool{}, refused: map[string]string{}, memStamp: map[string]string{},
		settle: newSettler(opt.Settle), ours: map[string]stamp{}, reopened: map[string]bool{}, finished: map[string]finishedEntry{}}
	b.scanFinished.Store(true)
	return b
}

// Path returns the vault folder.
func (b *Bridge) Path() string { return b.opt.Path }

// Run scaffolds what is missing, then keeps the vault in step until ctx
// ends: at once for file events and blackboard events, and every
// RescanInterval in any case (file systems without events). Errors of a
// pass are logged and the pass is retried; Run returns nil when ctx ends.
func (b *Bridge) Run(ctx context.Context) error {
	if _, err := Scaffold(b.opt.Path); err != nil {
		b.log.Error().Err(err).Msg("cannot create the vault layout; the vault bridge waits for the next rescan")
	}
	// File events wake the bridge at once (a person is waiting for the
	// result); blackboard events, which a busy instance writes by the
	// hundred, at most every minPassGap.
	wake, wakeFS := make(chan struct{}, 1), make(chan struct{}, 1)
	pokeOn := func(ch chan struct{}) func() {
		return func() {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
	stopWatch := b.watch(ctx, pokeOn(wakeFS))
	defer stopWatch()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); b.followEvents(ctx, pokeOn(wake)) }()
	defer wg.Wait()

	tick := time.NewTicker(b.opt.RescanInterval)
	defer tick.Stop()
	for {
		b.wake = time.Time{}
		err := b.Sync(ctx)
		if err != nil && ctx.Err() == nil {
			b.log.Warn().Err(err).Msg("vault pass failed; retrying on the next change or rescan")
		}
		if b.opt.ReportFunc != nil && ctx.Err() == nil {
			b.opt.ReportFunc(ctx, err)
		}
		// A file settling or a cooldown ending has no event of its own:
		// a timer brings the pass that admits it.
		var due <-chan time.Time
		var dueTimer *time.Timer
		if !b.wake.IsZero() {
			d := b.wake.Sub(b.NowFunc())
			if d < minPassGap {
				d = minPassGap
			}
			dueTimer = time.NewTimer(d)
			due = dueTimer.C
		}
		stopDue := func() {
			if dueTimer != nil {
				dueTimer.Stop()
			}
		}
		gap := time.NewTimer(minPassGap)
		fileEvent := false
		select {
		case <-ctx.Done():
			gap.Stop()
			stopDue()
			return nil
		case <-gap.C:
		case <-wakeFS:
			gap.Stop()
			fileEvent = true
		}
		if fileEvent {
			stopDue()
			continue
		}
		select {
		case <-ctx.Done():
			stopDue()
			return nil
		case <-wake:
		case <-wakeFS:
		case <-tick.C:
			b.scanFinished.Store(true)
		case <-due:
		}
		stopDue()
	}
}

// watch subscribes to file events in the folders people write to; it
// returns the function that stops watching. Without file events the
// rescan still finds everything.
func (b *Bridge) watch(ctx context.Context, poke func()) func() {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		b.log.Warn().Err(err).Msg("file events unavailable; the vault is read every rescan_interval")
		return func() {}
	}
	// Done/ is not watched: Sett writes there on every finished task, and
	// nothing in it can be retried (its retry: true is answered at the
	// next rescan).
	for _, d := range []string{"", NeedsAction, PendingApproval, Approved, Rejected, Failed, NeedsHumanReview} {
		if err := fw.Add(filepath.Join(b.opt.Path, d)); err != nil {
			b.log.Warn().Err(err).Str("folder", d).Msg("cannot watch a vault folder; it is read every rescan_interval")
		}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				if ev.Op == fsnotify.Chmod {
					continue
				}
				name := filepath.Base(ev.Name)
				if strings.HasPrefix(name, ".") && name != ".sett_stop" {
					continue // our own temp files among them
				}
				switch filepath.Base(filepath.Dir(ev.Name)) {
				case Failed, NeedsHumanReview:
					b.scanFinished.Store(true)
				}
				poke()
			case _, ok := <-fw.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return func() { close(done); _ = fw.Close() }
}

// followEvents wakes the bridge for every new blackboard event and notes
// what Dashboard.md shows as recent activity.
func (b *Bridge) followEvents(ctx context.Context, poke func()) {
	after := b.backfillActivity(ctx)
	for ctx.Err() == nil {
		if after == "" {
			id, err := b.bb.LastEventID(ctx)
			if err != nil {
				if !sleepCtx(ctx, time.Second) {
					return
				}
				continue
			}
			after = id
			if after == "" {
				after = "0-0"
			}
		}
		evs, err := b.bb.ReadEvents(ctx, after, 512, 2*time.Second)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			b.log.Debug().Err(err).Msg("reading the event stream failed; retrying")
			if !sleepCtx(ctx, time.Second) {
				return
			}
			continue
		}
		if len(evs) == 0 {
			continue
		}
		for _, ev := range evs {
			after = ev.StreamID
			b.noteEvent(ev)
		}
		poke()
	}
}

// backfillActivity reads the recent activity back from the event log,
// so that a restarted orchestrator's Dashboard.md still shows what
// happened before it; it returns the stream id to follow from ("" when
// the log could not be read: the follower starts at its end).
func (b *Bridge) backfillActivity(ctx context.Context) string {
	const perWindow = 5000
	last, err := b.bb.LastEventID(ctx)
	if err != nil {
		return ""
	}
	now := b.NowFunc()
	for _, w := range []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour} {
		start := fmt.Sprintf("%d-0", now.Add(-w).UnixMilli())
		evs, err := b.bb.RangeEvents(ctx, start, last, perWindow)
		if err != nil {
			return last
		}
		var lines []string
		for _, ev := range evs {
			if l := eventLine(ev); l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) >= maxActivity || len(evs) == perWindow || w == 24*time.Hour {
			if len(lines) > maxActivity {
				lines = lines[len(lines)-maxActivity:]
			}
			b.mu.Lock()
			b.activity = append(lines, b.activity...)
			if len(b.activity) > maxActivity {
				b.activity = b.activity[len(b.activity)-maxActivity:]
			}
			b.mu.Unlock()
			break
		}
	}
	return last
}

func (b *Bridge) noteEvent(ev blackboard.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ev.Type == blackboard.EventMemoryMerged && ev.WorkflowID != "" {
		b.merged[ev.WorkflowID] = true
	}
	if ev.Type == blackboard.EventWorkflowReopened && ev.WorkflowID != "" {
		b.reopened[ev.WorkflowID] = true
	}
	line := eventLine(ev)
	if line == "" {
		return
	}
	b.activity = append(b.activity, line)
	if len(b.activity) > maxActivity {
		b.activity = b.activity[len(b.activity)-maxActivity:]
	}
}

// eventLine is the Dashboard's activity line for ev, "" for an event it
// does not show.
func eventLine(ev blackboard.Event) string {
	var line string
	switch ev.Type {
	case blackboard.EventWorkflowStarted:
		line = "workflow " + blackboard.ShortID(ev.WorkflowID) + " started"
	case blackboard.EventWorkflowCompleted:
		line = "workflow " + blackboard.ShortID(ev.WorkflowID) + " ended " + mdText(ev.Field("status"))
	case blackboard.EventApprovalRequested:
		line = "approval requested for " + blackboard.ShortID(ev.ArtefactID)
	case blackboard.EventApprovalDecided:
		line = fmt.Sprintf("approval of %s decided: %s by %s (%s)", blackboard.ShortID(ev.ArtefactID), mdText(ev.Field("decision")), mdText(orDash(ev.Field("by"))), mdText(ev.Field("channel")))
	case blackboard.EventApprovalExpired:
		line = "approval of " + blackboard.ShortID(ev.ArtefactID) + " timed out"
	case blackboard.EventLearningRecorded:
		line = "learning recorded (workflow " + blackboard.ShortID(ev.WorkflowID) + ")"
	case blackboard.EventPaused:
		line = "paused"
	case blackboard.EventResumed:
		line = "resumed"
	default:
		return ""
	}
	return time.UnixMilli(ev.TsMs).UTC().Format("2006-01-02 15:04:05") + " — " + line
}

func (b *Bridge) note(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.activity = append(b.activity, b.NowFunc().UTC().Format("2006-01-02 15:04:05")+" — "+line)
	if len(b.activity) > maxActivity {
		b.activity = b.activity[len(b.activity)-maxActivity:]
	}
}

// Sync runs one full pass: new tasks, approvals, finished workflows, the
// memory files and the dashboard. Each step is idempotent; an error
// stops the pass and the next one starts over.
func (b *Bridge) Sync(ctx context.Context) error {
	var errs []error
	for p := range b.refused {
		if _, err := os.Lstat(p); err != nil {
			delete(b.refused, p)
		}
	}
	if err := b.ingest(ctx); err != nil {
		errs = append(errs, fmt.Errorf("tasks: %w", err))
	}
	if err := b.revive(ctx); err != nil {
		errs = append(errs, fmt.Errorf("retries: %w", err))
	}
	learned, err := b.learnings(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("learnings: %w", err))
	}
	pending, err := b.approvals(ctx, learned)
	if err != nil {
		errs = append(errs, fmt.Errorf("approvals: %w", err))
	}
	running, err := b.workflows(ctx, pending, learned)
	if err != nil {
		errs = append(errs, fmt.Errorf("workflows: %w", err))
	}
	if err := b.toolMemory(ctx); err != nil {
		errs = append(errs, fmt.Errorf("tool memory: %w", err))
	}
	if err := b.memories(ctx, false); err != nil {
		errs = append(errs, fmt.Errorf("memories: %w", err))
	}
	// The dashboard says so when this pass failed so far (a folder Sett
	// cannot write): it may well be writable when the rest is not.
	b.passErr = errors.Join(errs...)
	if err := b.dashboard(ctx, pending, running); err != nil {
		errs = append(errs, fmt.Errorf("dashboard: %w", err))
	}
	return errors.Join(errs...)
}

// filesNaming reads folder's Markdown files and returns those whose
// frontmatter names key, the id that ties a file Sett wrote to the
// blackboard. A file it cannot read safely, or one that names no key, is
// refused with the reason (missing for the latter), so the person sees
// why Sett does not act on it; a file that reads well loses an earlier
// refusal.
func (b *Bridge) filesNaming(folder, key, missing string) ([]*vaultFile, error) {
	dir := filepath.Join(b.opt.Path, folder)
	names, err := b.listMD(folder)
	if err != nil {
		return nil, err
	}
	var files []*vaultFile
	for _, name := range names {
		p := filepath.Join(dir, name)
		f, reason := readFile(b.opt.Path, dir, name, b.opt.MaxFileBytes)
		if reason != "" {
			b.refuse(p, reason)
			continue
		}
		if f == nil {
			continue
		}
		if f.Doc.Get(key) == "" {
			b.refuse(p, missing)
			continue
		}
		delete(b.refused, p)
		files = append(files, f)
	}
	return files, nil
}

// listMD returns the names of the entries of a vault folder that are not
// ignored, sorted.
func (b *Bridge) listMD(dir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(b.opt.Path, dir))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || Ignored(e.Name()) {
			continue
		}
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out, nil
}

// refuse records (and logs once) why a file is left alone.
func (b *Bridge) refuse(path, reason string) {
	if b.refused[path] != reason {
		b.log.Warn().Str("file", b.rel(path)).Str("reason", reason).Msg("vault file refused; it is left as it is")
	}
	b.refused[path] = reason
}

// rel names a path relative to the vault for messages.
func (b *Bridge) rel(p string) string {
	if r, err := filepath.Rel(b.opt.Path, p); err == nil {
		return r
	}
	return p
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
