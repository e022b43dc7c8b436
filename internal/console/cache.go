package console

import (
	"sync"
)

// maxCached bounds the cached reads of one generation (distinct list
// queries and the frame's counts).
const maxCached = 256

// readCache shares what the pages read between the pages that ask within
// one generation: while pages listen to the event stream, a change read
// from it starts a new generation, and every open list page fetches the
// same data again at once; it is read from Redis by the first of them
// only. Without a listening page nothing is cached (no reader notices
// changes then).
type readCache struct {
	mu      sync.Mutex
	gen     uint64
	live    bool
	entries map[string]any
}

// bump starts a new generation: something changed.
func (rc *readCache) bump() {
	rc.mu.Lock()
	rc.gen++
	rc.entries = nil
	rc.mu.Unlock()
}

// setLive records whether the event reader runs; either way the cache
// starts afresh.
func (rc *readCache) setLive(live bool) {
	rc.mu.Lock()
	rc.live = live
	rc.gen++
	rc.entries = nil
	rc.mu.Unlock()
}

// get returns the value of key in the current generation, computing it
// with read when absent. A value read while the generation moved on is
// returned but not kept.
func get[T any](rc *readCache, key string, read func() (T, error)) (T, error) {
	rc.mu.Lock()
	gen, live := rc.gen, rc.live
	if v, ok := rc.entries[key]; ok && live {
		rc.mu.Unlock()
		return v.(T), nil
	}
	rc.mu.Unlock()
	v, err := read()
	if err != nil || !live {
		return v, err
	}
	rc.mu.Lock()
	if rc.gen == gen && rc.live {
		if rc.entries == nil || len(rc.entries) >= maxCached {
			rc.entries = map[string]any{}
		}
		rc.entries[key] = v
	}
	rc.mu.Unlock()
	return v, nil
}
