package cub

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/settdev/sett/internal/blackboard"
)

// ContextBuilder assembles a grant's context chain: breadth-first
// over the target's source artefacts plus the claim's additional context
// (the reviews of a feedback claim), each replaced by the latest version of
// its thread, de-duplicated by thread, cut after Depth levels, newest first
// (ties by id).
//
// Artefacts never change, so the builder keeps the ones it read in a
// bounded cache. When every artefact of a chain is cached, the chain is
// built locally and checked with one pipelined read of the thread heads;
// otherwise it takes one pipelined read per level (and fills the cache).
//
// Safe for concurrent use.
type ContextBuilder struct {
	bb    *blackboard.Client
	Depth int
	cache *artefactCache
}

// NewContextBuilder returns a builder reading at most depth levels.
func NewContextBuilder(bb *blackboard.Client, depth int) *ContextBuilder {
	return &ContextBuilder{bb: bb, Depth: depth, cache: newArtefactCache(4<<20, 64<<10)}
}

// Chain is a built context chain.
type Chain struct {
	Artefacts []*blackboard.Artefact
	// Truncated is true when sources beyond Depth levels were left out.
	Truncated bool
	// Levels is how many levels were read.
	Levels int
}

// Build returns the context chain for target under claim. The target's own
// thread never appears in its chain.
//
// For a later version of a thread (a rework), the chain also holds what the
// thread was first built from (the sources of its earlier versions outside
// the thread, issue 28: "every feedback claim's input holds the upstream
// artefacts at every iteration"), and leaves out what was derived from its
// earlier versions (the reviews of earlier rounds) unless the claim names
// it as additional context.
func (b *ContextBuilder) Build(ctx context.Context, target *blackboard.Artefact, claim *blackboard.Claim) (Chain, error) {
	th, err := b.threadHistory(ctx, target)
	if err != nil {
		return Chain{}, err
	}
	if chain, ok, err := b.fromCache(ctx, target, claim, th); err != nil || ok {
		return chain, err
	}
	return b.bfs(target, claim, th, func(ids []string) ([]*blackboard.Artefact, error) {
		arts, err := b.bb.ResolveLatest(ctx, ids)
		if err == nil {
			b.cache.putLatest(ids, arts)
		}
		return arts, err
	})
}

var errCacheMiss = errors.New("cub: not cached")

// fromCache builds the chain from cached artefacts and their last known
// thread heads, then confirms every head in one round trip. ok is false
// when something was not cached or a thread has moved on.
func (b *ContextBuilder) fromCache(ctx context.Context, target *blackboard.Artefact, claim *blackboard.Claim, th history) (Chain, bool, error) {
	var threads, heads []string
	chain, err := b.bfs(target, claim, th, func(ids []string) ([]*blackboard.Artefact, error) {
		out := make([]*blackboard.Artefact, len(ids))
		for i, id := range ids {
			latest, ok := b.cache.latest(id)
			if !ok {
				return nil, errCacheMiss
			}
			out[i] = latest
			threads = append(threads, latest.LogicalID)
			heads = append(heads, latest.ID)
		}
		return out, nil
	})
	if errors.Is(err, errCacheMiss) {
		return Chain{}, false, nil
	}
	if err != nil {
		return Chain{}, false, err
	}
	current, err := b.bb.ThreadHeads(ctx, threads)
	if err != nil {
		return Chain{}, false, err
	}
	for i := range threads {
		if current[i] != heads[i] {
			return Chain{}, false, nil // a newer version exists: read it properly
		}
	}
	return chain, true, nil
}

// bfs walks the sources level by level; resolve turns a level's ids into
// the latest versions of their threads (nil for ids that do not exist).
func (b *ContextBuilder) bfs(target *blackboard.Artefact, claim *blackboard.Claim, th history, resolve func([]string) ([]*blackboard.Artefact, error)) (Chain, error) {
	seenThread := map[string]bool{target.LogicalID: true}
	seenID := map[string]bool{target.ID: true}
	asked := make(map[string]bool, len(claim.AdditionalContextIDs))
	for _, id := range claim.AdditionalContextIDs {
		asked[id] = true
	}
	var frontier []string
	push := func(ids []string) {
		for _, id := range ids {
			if !seenID[id] {
				seenID[id] = true
				frontier = append(frontier, id)
			}
		}
	}
	push(target.SourceArtefacts)
	push(th.upstream)
	push(claim.AdditionalContextIDs)
	var out Chain
	for len(frontier) > 0 {
		if out.Levels == b.Depth {
			out.Truncated = true
			break
		}
		out.Levels++
		arts, err := resolve(frontier)
		if err != nil {
			return Chain{}, err
		}
		frontier = nil
		for _, a := range arts {
			if a == nil || seenThread[a.LogicalID] || (!asked[a.ID] && th.derived(a)) {
				continue
			}
			seenThread[a.LogicalID] = true
			seenID[a.ID] = true
			out.Artefacts = append(out.Artefacts, a)
			push(a.SourceArtefacts)
		}
	}
	sort.Slice(out.Artefacts, func(i, j int) bool {
		a, b := out.Artefacts[i], out.Artefacts[j]
		if a.CreatedAtMs != b.CreatedAtMs {
			return a.CreatedAtMs > b.CreatedAtMs
		}
		return a.ID < b.ID
	})
	return out, nil
}

// artefactCache keeps immutable artefacts by id, and for each id the
// latest version of its thread seen so far, within a byte budget (oldest
// entries go first). Large artefacts are not kept.
type artefactCache struct {
	mu       sync.Mutex
	maxBytes int
	maxItem  int
	bytes    int
	byID     map[string]*blackboard.Artefact
	// latestOf maps an id that was asked for to the latest version it
	// resolved to.
	latestOf map[string]string
	order    []string
}

func newArtefactCache(maxBytes, maxItem int) *artefactCache {
	return &artefactCache{maxBytes: maxBytes, maxItem: maxItem,
		byID: map[string]*blackboard.Artefact{}, latestOf: map[string]string{}}
}

func size(a *blackboard.Artefact) int { return len(a.Payload) + len(a.Summary) + 512 }

// putLatest records what ids resolved to (aligned: arts[i] is the latest
// version of the thread of ids[i], nil when ids[i] does not exist). A
// cached resolution is only used after the heads check confirms it.
func (c *artefactCache) putLatest(ids []string, arts []*blackboard.Artefact) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, a := range arts {
		if a == nil || size(a) > c.maxItem {
			continue
		}
		if _, ok := c.byID[a.ID]; !ok {
			c.byID[a.ID] = a
			c.order = append(c.order, a.ID)
			c.bytes += size(a)
		}
		c.latestOf[ids[i]] = a.ID
		c.latestOf[a.ID] = a.ID
	}
	for c.bytes > c.maxBytes && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		if a, ok := c.byID[old]; ok {
			c.bytes -= size(a)
			delete(c.byID, old)
		}
	}
	// latestOf entries whose artefact was evicted are dropped lazily: a
	// lookup that finds no artefact is a miss.
	if len(c.latestOf) > 4*len(c.byID)+1024 {
		for id, l := range c.latestOf {
			if _, ok := c.byID[l]; !ok {
				delete(c.latestOf, id)
			}
		}
	}
}

// latest returns the cached latest version for id.
func (c *artefactCache) latest(id string) (*blackboard.Artefact, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.latestOf[id]
	if !ok {
		return nil, false
	}
	a, ok := c.byID[l]
	return a, ok
}

// history is what a thread's earlier versions say about its context.
type history struct {
	// versions holds the ids of the target's thread's versions, the
	// target's included.
	versions map[string]bool
	// upstream are the sources of the earlier versions that lie outside
	// the thread: what the thread was built from.
	upstream []string
}

// derived reports whether a was made from an earlier version of the
// thread (a review of an earlier round): one of its sources is a version.
func (h history) derived(a *blackboard.Artefact) bool {
	for _, s := range a.SourceArtefacts {
		if h.versions[s] {
			return true
		}
	}
	return false
}

// maxHistory bounds the walk back through a thread's versions.
const maxHistory = 64

// threadHistory walks target's thread back to its first version, one read
// per version (a rework's version n names version n-1 as its first
// source). Version 1 needs no read.
func (b *ContextBuilder) threadHistory(ctx context.Context, target *blackboard.Artefact) (history, error) {
	h := history{versions: map[string]bool{target.ID: true}}
	cur := target
	for i := 0; cur.Version > 1 && i < maxHistory; i++ {
		arts, err := b.bb.GetArtefacts(ctx, cur.SourceArtefacts)
		if err != nil {
			return history{}, err
		}
		var prev *blackboard.Artefact
		for _, a := range arts {
			if a != nil && a.LogicalID == target.LogicalID && !h.versions[a.ID] && (prev == nil || a.Version > prev.Version) {
				prev = a
			}
		}
		if prev == nil {
			break
		}
		h.versions[prev.ID] = true
		cur = prev
	}
	if cur != target {
		for _, s := range cur.SourceArtefacts {
			if !h.versions[s] {
				h.upstream = append(h.upstream, s)
			}
		}
	}
	return h, nil
}
