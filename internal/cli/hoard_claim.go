package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
)

// showClaimInstead answers `sett hoard ID` when ID is not an artefact but
// a claim (ids look alike, and status and watch print claim ids): it
// prints the claim, says which artefact it is about, and reports true.
// With no claim of that id either it reports false and the caller keeps
// its own "no artefact" error.
func showClaimInstead(ctx context.Context, w io.Writer, style outputStyle, bb *blackboard.Client, ref, format string) (bool, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	id := ref
	if blackboard.ValidateID(ref) != nil {
		var err error
		if id, err = bb.ResolveID(ctx, blackboard.PrefixClaim, ref); err != nil {
			return false, nil
		}
	}
	c, err := bb.GetClaim(ctx, id)
	if err != nil {
		return false, nil
	}
	if format == "jsonl" {
		return true, writeJSON(w, struct {
			Claim *blackboard.Claim `json:"claim"`
		}{c})
	}
	about := c.ArtefactID
	if a, err := bb.GetArtefact(ctx, c.ArtefactID); err == nil {
		about = fmt.Sprintf("%s v%d %s", a.Type, a.Version, a.ID)
	}
	fmt.Fprintf(w, "%s is a claim, not an artefact: the claim on %s of workflow %s.\n",
		style.id(c.ID), about, style.id(c.WorkflowID))
	renderClaim(w, style, "Claim", c)
	fmt.Fprintf(w, "\n`sett hoard %s` shows the artefact; `sett hoard --workflow %s -o tree` the whole workflow.\n",
		style.id(c.ArtefactID), style.id(c.WorkflowID))
	return true, nil
}
