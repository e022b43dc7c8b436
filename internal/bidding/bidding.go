// Package bidding holds an agent's static bidding rules: never on
// its own outputs unless it opts in, then its bid_script, then its
// consumes patterns, then its bidding_strategy. The cub applies them to
// every bid request; the orchestrator applies them to skip asking agents
// whose rules already say ignore, so a pipeline where each agent handles a
// few types costs no bid round trips for the rest.
package bidding

import (
	"path"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
)

// Rules are one agent's bidding rules. The zero value bids nothing useful:
// build it with FromConfig.
type Rules struct {
	Role            string
	Strategy        blackboard.Bid
	Consumes        []string
	BidOnOwnOutputs bool
	// HasScript is true when a bid_script decides (it then comes before
	// the consumes patterns and the strategy).
	HasScript bool
}

// FromConfig returns the rules of a configured agent.
func FromConfig(a config.AgentConfig) Rules {
	return Rules{Role: a.Role, Strategy: blackboard.Bid(a.BiddingStrategy), Consumes: a.Consumes,
		BidOnOwnOutputs: a.BidOnOwnOutputs, HasScript: len(a.BidScript) > 0}
}

// Reasons a bid was decided, for logs and events.
const (
	ReasonOwnOutput   = "own output"
	ReasonNotConsumed = "type not consumed"
	ReasonStrategy    = "bidding_strategy"
	ReasonScript      = "bid_script"
)

// Static decides a bid on an artefact of typ produced by producerRole
// without running anything. decided is false when the bid script must
// run; Fallback then gives the answer when the script fails.
func (r Rules) Static(typ, producerRole string) (bid blackboard.Bid, reason string, decided bool) {
	if producerRole == r.Role && !r.BidOnOwnOutputs {
		return blackboard.BidIgnore, ReasonOwnOutput, true
	}
	if r.HasScript {
		return "", "", false
	}
	bid, reason = r.Fallback(typ)
	return bid, reason, true
}

// Fallback decides from the consumes patterns and the strategy alone: the
// answer when no bid script runs or when it fails.
func (r Rules) Fallback(typ string) (blackboard.Bid, string) {
	if len(r.Consumes) > 0 && !Consumes(r.Consumes, typ) {
		return blackboard.BidIgnore, ReasonNotConsumed
	}
	if !r.Strategy.Valid() {
		return blackboard.BidIgnore, ReasonStrategy
	}
	return r.Strategy, ReasonStrategy
}

// Consumes reports whether any pattern (path.Match syntax) matches typ.
func Consumes(patterns []string, typ string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, typ); ok {
			return true
		}
	}
	return false
}
