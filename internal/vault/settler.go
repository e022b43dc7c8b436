package vault

import (
	"io/fs"
	"time"
)

// settler tells when a file's writer is done: when its size and
// modification time have not changed for the settle period, measured on
// the bridge's clock from the pass that first saw the current stamp.
// Editors write a note in steps (an empty file, autosaves, the full
// text, a rename), and a large copy arrives in chunks; reading before
// the writer is done turns half a note into a task. Not safe for
// concurrent use (the bridge's passes are serial).
type settler struct {
	period time.Duration
	seen   map[string]settling
}

type settling struct {
	st    stamp
	since time.Time
}

func newSettler(period time.Duration) *settler {
	return &settler{period: period, seen: map[string]settling{}}
}

// observe records fi for path at now and reports whether the file has
// been unchanged for the period; when it has not, at is when it will be
// if nothing changes (the bridge wakes then).
func (s *settler) observe(path string, fi fs.FileInfo, now time.Time) (settled bool, at time.Time) {
	st := stampOf(fi)
	e, ok := s.seen[path]
	if !ok || e.st != st {
		e = settling{st: st, since: now}
		s.seen[path] = e
	}
	at = e.since.Add(s.period)
	return !now.Before(at), at
}

// restart forgets path's history: the file changed after it looked
// settled, so the period starts again at the next observation.
func (s *settler) restart(path string) { delete(s.seen, path) }

// keepOnly forgets every path not in present (files gone or moved).
func (s *settler) keepOnly(present map[string]bool) {
	for p := range s.seen {
		if !present[p] {
			delete(s.seen, p)
		}
	}
}
