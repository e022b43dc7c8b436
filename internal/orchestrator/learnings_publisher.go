package orchestrator

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/learningsfile"
)

// LearningsPublisher keeps what tools receive as memory.learnings in step
// with the learnings recorded in Redis, for instances without a vault:
// the text is rendered in the learning loop's Agent_Memory.md form. With a vault
// the vault bridge publishes the file as the human left it instead, and
// this publisher stays idle (VaultManaged).
type LearningsPublisher struct {
	bb  *blackboard.Client
	log zerolog.Logger
	// VaultManaged is true when a vault publishes the tool memory.
	VaultManaged bool
}

// NewLearningsPublisher returns a publisher writing through bb.
func NewLearningsPublisher(bb *blackboard.Client, vaultManaged bool, log zerolog.Logger) *LearningsPublisher {
	return &LearningsPublisher{bb: bb, VaultManaged: vaultManaged, log: log.With().Str("component", "learnings_publisher").Logger()}
}

// Publish renders every learning and publishes the text (a no-op for
// tools when nothing changed: the rev only moves on a change).
func (p *LearningsPublisher) Publish(ctx context.Context) error {
	if p.VaultManaged {
		return nil
	}
	ls, err := p.bb.Learnings(ctx)
	if err != nil {
		return err
	}
	text := ""
	if len(ls) > 0 {
		text = learningsfile.Render(ls)
		if w := learningsfile.Warning(len(ls)); w != "" {
			p.log.Warn().Int("learnings", len(ls)).Msg(w + " (see `sett learnings`)")
		}
	}
	return p.bb.PublishToolMemory(ctx, text, "")
}
