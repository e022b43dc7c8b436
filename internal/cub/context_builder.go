package cub

import (
	"context"
	"sort"

	"github.com/settdev/sett/pkg/blackboard"
)

// ContextBuilder assembles a grant's context chain (SPEC §7): breadth-first
// over the target's source artefacts plus the claim's additional context
// (the reviews of a feedback claim), each replaced by the latest version of
// its thread, de-duplicated by thread, cut after Depth levels, newest first
// (ties by id). One pipelined read per level.
//
// Safe for concurrent use.
type ContextBuilder struct {
	bb    *blackboard.Client
	Depth int
}

// NewContextBuilder returns a builder reading at most depth levels.
func NewContextBuilder(bb *blackboard.Client, depth int) *ContextBuilder {
	return &ContextBuilder{bb: bb, Depth: depth}
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
func (b *ContextBuilder) Build(ctx context.Context, target *blackboard.Artefact, claim *blackboard.Claim) (Chain, error) {
	seenThread := map[string]bool{target.LogicalID: true}
	seenID := map[string]bool{target.ID: true}
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
	push(claim.AdditionalContextIDs)
	var out Chain
	for len(frontier) > 0 {
		if out.Levels == b.Depth {
			out.Truncated = true
			break
		}
		out.Levels++
		arts, err := b.bb.ResolveLatest(ctx, frontier)
		if err != nil {
			return Chain{}, err
		}
		frontier = nil
		for _, a := range arts {
			if a == nil || seenThread[a.LogicalID] {
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
