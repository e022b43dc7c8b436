package priority

import (
	"fmt"
	"net/mail"
	"strings"
)

// MaxWeight bounds every weight and every numeric priority, so that no sum
// of them can overflow.
const MaxWeight = 1_000_000

// Weights are the points of each part of a score, and who counts as an
// important sender (orchestrator.priority in sett.yml). DefaultWeights
// returns the scheduling rules'; the zero Weights scores every goal 0. Weights is
// plain data, safe for concurrent reads.
type Weights struct {
	// High, Medium and Low are the points of the priority labels.
	High, Medium, Low int
	// Deadline2h, Deadline1d and Deadline1w are the points of a deadline
	// closer than 2 hours (or past), 1 day and 1 week.
	Deadline2h, Deadline1d, Deadline1w int
	// ImportantSender is the points of a sender in ImportantSenders.
	ImportantSender int
	// ImportantSenders are addresses, or "@domain" for a whole domain.
	ImportantSenders []string
}

// DefaultWeights returns the scheduling rules' weights: high 10, medium 5, low 0;
// deadline +20, +10, +5; important sender +10; no important senders.
func DefaultWeights() Weights {
	return Weights{High: 10, Medium: 5, Low: 0, Deadline2h: 20, Deadline1d: 10, Deadline1w: 5, ImportantSender: 10}
}

// IsImportant reports whether from (an address, or "Name <address>") is
// one of w.ImportantSenders (see the package documentation).
func (w Weights) IsImportant(from string) bool {
	addr := senderAddress(from)
	if addr == "" {
		return false
	}
	domain := ""
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		domain = addr[i:] // "@company.com"
	}
	for _, e := range w.ImportantSenders {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
		case strings.HasPrefix(e, "@"):
			if domain == e {
				return true
			}
		case e == addr:
			return true
		}
	}
	return false
}

// senderAddress returns the lower-case address of from, or "".
func senderAddress(from string) string {
	from = strings.TrimSpace(from)
	if from == "" {
		return ""
	}
	if a, err := mail.ParseAddress(from); err == nil {
		return strings.ToLower(a.Address)
	}
	return strings.ToLower(strings.Trim(from, "<> "))
}

// ValidateSender checks one entry of important_senders: an address
// (someone@company.com) or a domain ("@company.com"). It returns an error
// wrapping ErrInvalidSender that names the entry and says what is allowed.
func ValidateSender(entry string) error {
	e := strings.TrimSpace(entry)
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s (use an address like ceo@company.com, or @company.com for a whole domain)", ErrInvalidSender, entry, why)
	}
	switch {
	case e == "":
		return bad("it is empty")
	case strings.HasPrefix(e, "@"):
		d := e[1:]
		if d == "" || strings.ContainsAny(d, "@ <>") {
			return bad("not a domain")
		}
		return nil
	case strings.Count(e, "@") != 1 || strings.HasSuffix(e, "@"):
		return bad("not an address")
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Name != "" || !strings.EqualFold(a.Address, e) {
		return bad("not a plain address")
	}
	return nil
}
