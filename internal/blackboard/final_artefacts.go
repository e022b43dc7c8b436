package blackboard

import "sort"

// FinalArtefacts are a workflow's results among arts (its artefacts, in
// any order): those no other artefact builds on, oldest first (then by
// id). Reviews are left out on both sides — they judge work rather than
// build on it — so an approved plan is a result and its approving review
// is not, and a superseded version drops out because its rework cites it.
// The goal is a result only when nothing was built on it (a workflow that
// ended before any work). `sett forage --wait` prints these; the vault's
// Done/ file copies them under its outcome.
func FinalArtefacts(arts []*Artefact) []*Artefact {
	cited := map[string]bool{}
	for _, a := range arts {
		if a == nil || a.StructuralType == StructuralReview {
			continue
		}
		for _, s := range a.SourceArtefacts {
			cited[s] = true
		}
	}
	var out []*Artefact
	for _, a := range arts {
		if a != nil && !cited[a.ID] && a.StructuralType != StructuralReview {
			out = append(out, a)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreatedAtMs != out[j].CreatedAtMs {
			return out[i].CreatedAtMs < out[j].CreatedAtMs
		}
		return out[i].ID < out[j].ID
	})
	return out
}
