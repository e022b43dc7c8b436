package cli

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/textcut"
)

// checkFormat refuses an -o value that is not one of allowed.
func checkFormat(format string, allowed ...string) error {
	if slices.Contains(allowed, format) {
		return nil
	}
	return usageError("unknown output format %q: use one of %s", format, strings.Join(allowed, ", "))
}

// checkGlob refuses a malformed glob pattern (path.Match syntax) for flag.
func checkGlob(flag, pattern string) error {
	if pattern == "" {
		return nil
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return usageError("--%s %q is not a valid pattern (use * and ? wildcards, [a-z] classes)", flag, pattern)
	}
	return nil
}

// globMatch reports whether s matches pattern; an empty pattern matches
// everything. Patterns were checked by checkGlob.
func globMatch(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	ok, _ := path.Match(pattern, s)
	return ok
}

// parseTimeBound reads a --since/--until value: a duration before now
// ("10m", "2h30m", "1d"), an RFC 3339 time ("2024-05-01T14:00:00Z"), a
// local date-time ("2024-05-01T14:00:00" or "2024-05-01 14:00") or a local
// date ("2024-05-01"). It returns Unix milliseconds; "" gives 0.
func parseTimeBound(flag, v string, now time.Time) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	if d, ok := parseAge(v); ok {
		return now.Add(-d).UnixMilli(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.RFC3339} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UnixMilli(), nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, usageError("--%s %q is neither a duration (10m, 2h, 1d) nor a time (2024-05-01T14:00:00Z, 2024-05-01)", flag, v)
}

// parseAge reads a non-negative Go duration, also accepting whole days
// ("3d").
func parseAge(v string) (time.Duration, bool) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err == nil && days >= 0 && fmt.Sprint(days) == n {
			return time.Duration(days) * 24 * time.Hour, true
		}
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

// resolveArtefactID expands a full id or a unique short prefix to an
// artefact id. The errors say what was wrong and what to do: an ambiguous
// prefix lists its candidates with their type and summary.
func resolveArtefactID(ctx context.Context, bb *blackboard.Client, what, ref string) (string, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	if blackboard.ValidateID(ref) == nil {
		return ref, nil
	}
	id, err := bb.ResolveID(ctx, blackboard.PrefixArtefact, ref)
	var amb *blackboard.AmbiguousError
	switch {
	case err == nil:
		return id, nil
	case errors.As(err, &amb):
		return "", ambiguousError(ctx, bb, what, amb)
	case errors.Is(err, blackboard.ErrNotFound):
		list := "sett hoard"
		if what == "workflow" {
			list = "sett hoard --type GoalDefined"
		}
		return "", fmt.Errorf("no %s with id %q in instance %s: list them with `%s`", what, ref, bb.Instance(), list)
	case errors.Is(err, blackboard.ErrInvalid):
		return "", usageError("%q is not an id or id prefix: give at least 4 characters of an id (0-9, a-f), as `sett hoard` shows them", ref)
	}
	return "", err
}

// ambiguousError lists the candidates of an ambiguous prefix.
func ambiguousError(ctx context.Context, bb *blackboard.Client, what string, amb *blackboard.AmbiguousError) error {
	var b strings.Builder
	more := ""
	if len(amb.Candidates) >= 10 {
		more = " or more"
	}
	fmt.Fprintf(&b, "id prefix %q matches %d%s %ss; give more characters:", amb.Prefix, len(amb.Candidates), more, what)
	arts, err := bb.GetArtefacts(ctx, amb.Candidates)
	for i, id := range amb.Candidates {
		fmt.Fprintf(&b, "\n  %s", id)
		if err == nil && arts[i] != nil {
			fmt.Fprintf(&b, "  %s  %s", arts[i].Type, textcut.Runes(oneLine(arts[i].Summary), 60))
		}
	}
	return usageError("%s", b.String())
}

// resolveWorkflow expands a workflow id or prefix (a workflow's id is its
// goal's id) and reads the workflow.
func resolveWorkflow(ctx context.Context, bb *blackboard.Client, ref string) (*blackboard.Workflow, error) {
	id, err := resolveArtefactID(ctx, bb, "workflow", ref)
	if err != nil {
		return nil, err
	}
	wf, err := bb.GetWorkflow(ctx, id)
	if err == nil {
		return wf, nil
	}
	if !errors.Is(err, blackboard.ErrNotFound) {
		return nil, err
	}
	if a, aerr := bb.GetArtefact(ctx, id); aerr == nil {
		return nil, fmt.Errorf("%s is a %s artefact, not a goal; its workflow is %s", blackboard.ShortID(id), a.Type, a.WorkflowID)
	}
	return nil, fmt.Errorf("no workflow with id %s in instance %s: list goals with `sett hoard --type GoalDefined`", id, bb.Instance())
}
