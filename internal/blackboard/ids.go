package blackboard

import (
	"fmt"
	"regexp"

	"github.com/google/uuid"

	"github.com/settdev/sett/internal/textcut"
)

// idNamespace roots the name-based (UUIDv5) ids Sett derives, so that a
// retried orchestrator step produces the same id and the write-once scripts
// turn the retry into a no-op.
var idNamespace = uuid.MustParse("5e77b0a2-6c1d-4d43-9a3e-8f2b3c4d5e6f")

// NewID returns a fresh random id (UUIDv4, lowercase canonical form).
func NewID() string { return uuid.NewString() }

// DeriveID returns a deterministic id for a purpose and its parent ids,
// e.g. DeriveID("feedback-claim", claimID). The same inputs always give the
// same id.
func DeriveID(purpose string, parts ...string) string {
	name := purpose
	for _, p := range parts {
		name += "\x00" + p
	}
	return uuid.NewSHA1(idNamespace, []byte(name)).String()
}

var (
	instancePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	agentPattern    = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
)

// ValidateID checks that id is a canonical lowercase UUID, the only form
// that is ever used inside a key. Errors wrap ErrInvalid.
func ValidateID(id string) error {
	if !isCanonicalUUID(id) {
		return fmt.Errorf("%w: %q is not an id (expected a lowercase UUID like 0b4e7c1a-...)", ErrInvalid, textcut.Bytes(id, 64))
	}
	return nil
}

// isCanonicalUUID reports whether id is 8-4-4-4-12 lowercase hex digits.
// A byte loop, not a regexp: every script call validates several ids, and
// the regexp engine was a visible share of the daemons' CPU per claim.
func isCanonicalUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// ValidateInstance checks that name is usable as an instance name: a DNS
// label (lowercase letters, digits and dashes, at most 63 characters), so
// that it also works as a Docker network and container name prefix.
func ValidateInstance(name string) error {
	if !instancePattern.MatchString(name) {
		return fmt.Errorf("%w: instance name %q must be 1-63 lowercase letters, digits or dashes, starting and ending with a letter or digit", ErrInvalid, textcut.Bytes(name, 80))
	}
	return nil
}

// ValidateAgentName checks an agent name: lowercase letters, digits, '-' and
// '_', starting with a letter or digit, at most 63 characters.
func ValidateAgentName(name string) error {
	if !agentPattern.MatchString(name) {
		return fmt.Errorf("%w: agent name %q must be 1-63 lowercase letters, digits, '-' or '_', starting with a letter or digit", ErrInvalid, textcut.Bytes(name, 80))
	}
	return nil
}

// validateIDs checks every id with ValidateID and returns the first error.
func validateIDs(ids ...string) error {
	for _, id := range ids {
		if err := ValidateID(id); err != nil {
			return err
		}
	}
	return nil
}

// ShortIDLen is how many characters of an id listings, reasons and file
// names show: enough to be unique among 100 000 ids almost always, and
// accepted back as a prefix by every command (ResolveID).
const ShortIDLen = 8

// ShortID is the first ShortIDLen characters of id (all of a shorter one).
func ShortID(id string) string {
	if len(id) > ShortIDLen {
		return id[:ShortIDLen]
	}
	return id
}
