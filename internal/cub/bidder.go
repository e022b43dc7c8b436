package cub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/textcut"
	"github.com/settdev/sett/internal/tool"
)

// Bidder decides an agent's bid on a claim with the agent's rules (package
// bidding): never on its own outputs unless configured, then the
// bid_script when it answers a valid bid, then the consumes patterns and
// the static bidding_strategy.
//
// Safe for concurrent use.
type Bidder struct {
	bb    *blackboard.Client
	cfg   BidderConfig
	rules bidding.Rules
	log   zerolog.Logger
	// RunFunc runs the bid script; tool.Run unless a test replaces it.
	RunFunc func(context.Context, tool.Spec) tool.Result
	env     []string
}

// NewBidder returns a bidder for the agent cfg describes; env is its bid
// script's environment.
func NewBidder(bb *blackboard.Client, cfg BidderConfig, env []string, log zerolog.Logger) *Bidder {
	rules := bidding.Rules{Role: cfg.Role, Strategy: blackboard.Bid(cfg.Strategy), Consumes: cfg.Consumes,
		BidOnOwnOutputs: cfg.BidOnOwnOutputs, HasScript: len(cfg.BidScript) > 0}
	return &Bidder{bb: bb, cfg: cfg, rules: rules, env: env, RunFunc: tool.Run,
		log: log.With().Str("component", "bidder").Logger()}
}

// Decide returns the bid for a bid request and a short reason for the log.
func (b *Bidder) Decide(ctx context.Context, req blackboard.InboxMessage) (blackboard.Bid, string) {
	if bid, why, decided := b.rules.Static(req.ArtefactType, req.ProducedByRole); decided {
		return bid, why
	}
	if bid, ok := b.fromScript(ctx, req); ok {
		return bid, bidding.ReasonScript
	}
	return b.rules.Fallback(req.ArtefactType)
}

// bidScriptInput is the document a bid script reads on stdin.
type bidScriptInput struct {
	Claim          *blackboard.Claim `json:"claim"`
	TargetArtefact tool.Artefact     `json:"target_artefact"`
	Agent          string            `json:"agent"`
	Role           string            `json:"role"`
	Instance       string            `json:"instance"`
}

// fromScript runs the bid script. Only stdout is the answer: a bare bid
// ("exclusive") or {"bid": "exclusive"}. Anything else — a failure, a
// timeout, another answer — is logged and falls back to the static rules.
func (b *Bidder) fromScript(ctx context.Context, req blackboard.InboxMessage) (blackboard.Bid, bool) {
	view, err := b.bb.ReadGrant(ctx, req.ClaimID, req.ArtefactID, req.WorkflowID)
	if err != nil {
		b.log.Warn().Err(err).Str("claim_id", req.ClaimID).Msg("bid_script skipped: cannot read the claim")
		return "", false
	}
	in, err := json.Marshal(bidScriptInput{Claim: view.Claim, TargetArtefact: toToolArtefact(view.Target),
		Agent: b.cfg.Agent, Role: b.cfg.Role, Instance: b.bb.Instance()})
	if err != nil {
		return "", false
	}
	res := b.RunFunc(ctx, tool.Spec{Command: b.cfg.BidScript, Dir: b.cfg.Workspace, Env: b.env, Stdin: in,
		Timeout: b.cfg.BidScriptTimeout, MaxStdout: 64 << 10, MaxStderr: 64 << 10,
		Ledger: b.cfg.ToolLedger, Sandbox: b.cfg.Sandbox})
	log := b.log.With().Str("claim_id", req.ClaimID).Logger()
	if len(res.Stderr) > 0 {
		log.Info().Str("stderr", string(res.Stderr)).Msg("bid_script stderr")
	}
	if res.Failure != "" {
		log.Warn().Str("failure", string(res.Failure)).Str("detail", res.Detail).Msg("bid_script failed; using the static strategy")
		return "", false
	}
	bid, err := ParseBid(res.Stdout)
	if err != nil {
		log.Warn().Err(err).Msg("bid_script answer not understood; using the static strategy")
		return "", false
	}
	return bid, true
}

// ParseBid reads a bid script's answer: one bid word, or a JSON object
// {"bid": "..."} (surrounding whitespace allowed, case-insensitive).
func ParseBid(stdout []byte) (blackboard.Bid, error) {
	s := strings.TrimSpace(string(stdout))
	if strings.HasPrefix(s, "{") {
		var doc struct {
			Bid string `json:"bid"`
		}
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			return "", fmt.Errorf("cub: bid_script printed invalid JSON: %v", err)
		}
		s = doc.Bid
	}
	bid := blackboard.Bid(strings.ToLower(strings.TrimSpace(s)))
	if !bid.Valid() {
		return "", fmt.Errorf("cub: bid_script printed %q; expected one of review, claim, exclusive, ignore", textcut.Bytes(s, 80))
	}
	return bid, nil
}

// toToolArtefact converts a blackboard artefact to what a tool sees.
func toToolArtefact(a *blackboard.Artefact) tool.Artefact {
	return tool.Artefact{
		ID: a.ID, LogicalID: a.LogicalID, Version: a.Version, StructuralType: string(a.StructuralType),
		Type: a.Type, Payload: a.Payload, SourceArtefacts: a.SourceArtefacts, ProducedByRole: a.ProducedByRole,
		WorkflowID: a.WorkflowID, ClaimID: a.ClaimID, Summary: a.Summary, CreatedAtMs: a.CreatedAtMs,
		Metadata: a.Metadata, Priority: a.Priority, ProducedByAgent: a.ProducedByAgent,
	}
}
