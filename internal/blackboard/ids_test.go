package blackboard_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

func TestValidateID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		id   string
		ok   bool
	}{
		{"canonical v4", "0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b", true},
		{"derived v5", blackboard.DeriveID("x"), true},
		{"new", blackboard.NewID(), true},
		{"empty", "", false},
		{"uppercase", "0B4E7C1A-2F3D-4E5F-8A9B-0C1D2E3F4A5B", false},
		{"no dashes", "0b4e7c1a2f3d4e5f8a9b0c1d2e3f4a5b", false},
		{"braces", "{0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b}", false},
		{"urn", "urn:uuid:0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b", false},
		{"trailing newline", "0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b\n", false},
		{"too short", "0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5", false},
		{"non-hex", "0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5g", false},
		{"colon (would split a key)", "0b4e7c1a-2f3d-4e5f-8a9b:0c1d2e3f4a5b", false},
		{"prefix", "0b4e", false},
		{"dash out of place", "0b4e7c1a-2f3d-4e5f-8a9b0-c1d2e3f4a5b", false},
		{"non-ASCII", "0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4aé", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkValid(t, blackboard.ValidateID(tc.id), tc.ok)
		})
	}
}

// ValidateID accepts exactly what the canonical-UUID pattern matches.
func FuzzValidateID(f *testing.F) {
	pattern := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for _, seed := range []string{"", blackboard.NewID(), "0B4E7C1A-2F3D-4E5F-8A9B-0C1D2E3F4A5B",
		"0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5g", "0b4e7c1a-2f3d-4e5f-8a9b0-c1d2e3f4a5b", "0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := blackboard.ValidateID(id) == nil, pattern.MatchString(id); got != want {
			t.Errorf("ValidateID(%q) accepts = %v, the pattern says %v", id, got, want)
		}
	})
}

func TestValidateInstance(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		instance string
		ok       bool
	}{
		{"one letter", "a", true},
		{"one digit", "7", true},
		{"dashes inside", "team-a-prod-2", true},
		{"63 characters", strings.Repeat("a", 63), true},
		{"64 characters", strings.Repeat("a", 64), false},
		{"empty", "", false},
		{"leading dash", "-a", false},
		{"trailing dash", "a-", false},
		{"uppercase", "Prod", false},
		{"underscore", "a_b", false},
		{"colon", "a:b", false},
		{"brace", "a{b}", false},
		{"space", "a b", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkValid(t, blackboard.ValidateInstance(tc.instance), tc.ok)
		})
	}
}

func TestValidateAgentName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		agent string
		ok    bool
	}{
		{"plain", "coder", true},
		{"one character", "a", true},
		{"digits dashes underscores", "code_reviewer-2", true},
		{"leading digit", "2nd", true},
		{"63 characters", strings.Repeat("a", 63), true},
		{"64 characters", strings.Repeat("a", 64), false},
		{"empty", "", false},
		{"leading underscore", "_coder", false},
		{"leading dash", "-coder", false},
		{"uppercase", "Coder", false},
		{"colon (would split a key)", "a:b", false},
		{"dot", "a.b", false},
		{"space", "a b", false},
		{"trailing newline", "coder\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkValid(t, blackboard.ValidateAgentName(tc.agent), tc.ok)
		})
	}
}

func checkValid(t *testing.T, err error, ok bool) {
	t.Helper()
	switch {
	case ok && err != nil:
		t.Errorf("got %v, want valid", err)
	case !ok && !errors.Is(err, blackboard.ErrInvalid):
		t.Errorf("got %v, want an error wrapping ErrInvalid", err)
	}
}

func TestDeriveID(t *testing.T) {
	t.Parallel()
	a := blackboard.DeriveID("feedback-claim", idA)
	if b := blackboard.DeriveID("feedback-claim", idA); a != b {
		t.Errorf("DeriveID is not deterministic: %s then %s", a, b)
	}
	if err := blackboard.ValidateID(a); err != nil {
		t.Errorf("derived id %s is not a valid id: %v", a, err)
	}
	// Different purposes, parents or part boundaries give different ids.
	distinct := map[string]string{"feedback-claim " + idA: a}
	for name, id := range map[string]string{
		"feedback-claim " + idB:    blackboard.DeriveID("feedback-claim", idB),
		"review-claim " + idA:      blackboard.DeriveID("review-claim", idA),
		"feedback-claim":           blackboard.DeriveID("feedback-claim"),
		"feedback-claim idA idB":   blackboard.DeriveID("feedback-claim", idA, idB),
		"feedback-claim idB idA":   blackboard.DeriveID("feedback-claim", idB, idA),
		"parts ab|c":               blackboard.DeriveID("p", "ab", "c"),
		"parts a|bc":               blackboard.DeriveID("p", "a", "bc"),
		"purpose joined with part": blackboard.DeriveID("feedback-claim" + idA),
	} {
		for other, oid := range distinct {
			if id == oid {
				t.Errorf("%s and %s derive the same id %s", name, other, id)
			}
		}
		distinct[name] = id
	}
}

func TestNewID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := blackboard.NewID()
		if err := blackboard.ValidateID(id); err != nil {
			t.Fatalf("NewID() = %q: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %s", id)
		}
		seen[id] = true
	}
}
