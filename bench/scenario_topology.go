package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/settdev/sett/internal/redistest"
)

// benchTopology is a production-shaped Redis the 1-agent hop and the
// throughput rounds run against, next to the single plaintext node.
type benchTopology struct {
	key   string // suffix of the figure names: "cluster", "tls"
	title string // suffix of the figure titles
	note  string // what differs from the single plaintext node
	start func(dir, password string) (*redistest.Topology, error)
}

// benchTopologies are the deployments issue 15 asks figures for. Every
// data node persists as the single node does (AOF, fsync every second),
// so that the rows differ only by the topology.
var benchTopologies = []benchTopology{
	{
		key: "cluster", title: "Redis Cluster (3 masters)",
		note: "3-master Redis Cluster on loopback (AOF everysec on each master); daemons and harness use cluster clients. " +
			"All keys of an instance share one hash slot ({instance} tag), so one master serves the whole instance: " +
			"the difference to the single node is the cluster client and protocol, not scale-out",
		start: func(_, password string) (*redistest.Topology, error) {
			return redistest.StartCluster(3, password, redistest.ServerOptions{AppendOnly: true, AppendFsync: "everysec"})
		},
	},
	{
		key: "tls", title: "TLS",
		note: "TLS-only redis-server on loopback requiring client certificates (ECDSA P-256, TLS 1.2+; AOF everysec); " +
			"daemons and harness connect with rediss:// and the CA and client certificate files",
		start: func(dir, password string) (*redistest.Topology, error) {
			return redistest.StartTLS(dir, redistest.ServerOptions{Password: password, AppendOnly: true,
				AppendFsync: "everysec", Dir: filepath.Join(dir, "redis")})
		},
	},
}

// benchVariant is a way of deploying the stack that gets its own 1-agent
// hop and throughput rows, informational, next to the main ones.
type benchVariant struct {
	key, title, note string
	apply            func(*stackSpec)
}

// tcpVariant connects the daemons over loopback TCP instead of the Unix
// socket the local runtime (and so the main rows) use.
var tcpVariant = benchVariant{key: "tcp", title: "loopback TCP",
	note: "the same single redis-server, the daemons connected over loopback TCP (redis://127.0.0.1) instead of its Unix socket; " +
		"what a deployment whose daemons and Redis are on different hosts pays per round trip, less the network",
	apply: func(sp *stackSpec) { sp.tcp = true }}

// topologies runs the 1-agent hop and the throughput rounds on each of
// benchTopologies with the daemons configured for it through
// services.redis, as a user of that deployment configures them, and with
// the daemons on loopback TCP.
func (r *runner) topologies(ctx context.Context) error {
	if err := r.variantRows(ctx, tcpVariant); err != nil {
		return fmt.Errorf("%s: %w", tcpVariant.title, err)
	}
	for _, bt := range benchTopologies {
		if err := r.onTopology(ctx, bt); err != nil {
			return fmt.Errorf("%s: %w", bt.title, err)
		}
	}
	return nil
}

func (r *runner) onTopology(ctx context.Context, bt benchTopology) error {
	password, err := randomPassword()
	if err != nil {
		return err
	}
	r.progress("starting %s", bt.title)
	tp, err := bt.start(filepath.Join(r.workDir, "redis-"+bt.key), password)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer tp.Stop()
	// Each stack is an instance of its own on the one deployment.
	return r.variantRows(ctx, benchVariant{key: bt.key, title: bt.title, note: bt.note,
		apply: func(sp *stackSpec) { sp.topology = tp }})
}

// variantRows measures the 1-agent hop and the throughput rounds on
// stacks deployed as v says.
func (r *runner) variantRows(ctx context.Context, v benchVariant) error {
	spec := stackSpec{name: "hop-1-" + v.key, agents: noopAgents(1, 0)}
	v.apply(&spec)
	s, err := r.startStack(ctx, spec)
	if err != nil {
		return err
	}
	// runHops takes its counts from the options; the variant rows have
	// their own. The copy shares figures and report with r.
	hops := *r
	hops.opts.HopSamples = r.opts.TopologyHopSamples
	f, b, err := hops.runHops(ctx, s, 1)
	s.Close()
	if err != nil {
		return err
	}
	hop := NewFigure("hop_1_agent_"+v.key, "hop overhead, 1 agent, "+v.title, f.Unit, f.SampleOf, f.Values, "")
	hop.Note = f.Note + "; " + v.note + "; no target (informational: compare with hop overhead, 1 agent)"
	r.add(hop)
	b.Name, b.Title = b.Name+"_"+v.key, b.Title+", "+v.title
	r.report.Breakdowns = append(r.report.Breakdowns, b)

	spec = stackSpec{name: "throughput-" + v.key, agents: noopAgents(1, r.opts.ThroughputMaxConcurrent)}
	v.apply(&spec)
	s, err = r.startStack(ctx, spec)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, _, err := r.throughputRound(ctx, s, min(20, r.opts.ThroughputGoals), v.key+" warm-up"); err != nil {
		return err
	}
	var rates []float64
	claims := 0
	for round := 0; round < r.opts.TopologyThroughputRounds; round++ {
		rate, n, err := r.throughputRound(ctx, s, r.opts.ThroughputGoals, fmt.Sprintf("%s round %d", v.key, round))
		if err != nil {
			return err
		}
		rates = append(rates, rate)
		claims += n
	}
	tput := NewFigure("throughput_200_goals_"+v.key, fmt.Sprintf("throughput, %d concurrent goals, %s", r.opts.ThroughputGoals, v.title),
		"claims/s", fmt.Sprintf("rounds (%d claims)", claims), rates, "")
	tput.Note = fmt.Sprintf("as throughput, %d concurrent goals (one agent, max_concurrent %d, 16 posting goroutines), on this deployment; %s; "+
		"no target (informational)", r.opts.ThroughputGoals, r.opts.ThroughputMaxConcurrent, v.note)
	r.add(tput)
	return nil
}

// randomPassword is a fresh Redis password, as the local runtime makes
// one per instance.
func randomPassword() (string, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	return hex.EncodeToString(raw), nil
}
