package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/runtime/docker"
	"github.com/settdev/sett/internal/stacktest"
)

// hostsLeaseTTL is the work lease of the many-hosts test: short, so that a
// cut-off host's claim comes back within seconds.
const hostsLeaseTTL = 3 * time.Second

// hostsTool is the agent's tool: it stamps its start into the shared
// workspace (one file per host, one line per claim), waits until the test
// releases it, stamps its finish and answers with a Result that names its
// host. The stamps let the test see which host ran a claim, and whether a
// run finished, whatever the blackboard says.
const hostsTool = `cat >/dev/null
h=$(cat /etc/hostname)
echo "start $SETT_CLAIM_ID" >> /workspace/stamps/$h
while [ ! -e /workspace/release ]; do sleep 0.05; done
echo "finish $SETT_CLAIM_ID" >> /workspace/stamps/$h
printf '{"artefact_type":"Result","artefact_payload":"done on %s"}' "$h"
`

// hostLab is an instance spread over "hosts": Redis, the orchestrator
// and each cub run in their own container, and each non-Redis host has
// its own private network that only it and Redis are attached to. Cutting
// a host's network off leaves its container running with no route to
// Redis, nor to any other host, as a pulled cable would.
type hostLab struct {
	t        testing.TB
	h        *harness
	name     string
	dir      string
	password string
	bb       *blackboard.Client
	// nets maps a host to its network; ids maps a host to its container.
	nets map[string]string
	ids  map[string]string
}

func newHostLab(t testing.TB, h *harness, yaml string) *hostLab {
	t.Helper()
	dir := t.TempDir()
	// The cubs run as the image's user (65532): let it write the stamps.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "stamps"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "stamps"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sett.yml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := config.Load(filepath.Join(dir, "sett.yml")); err != nil {
		t.Fatal(err)
	}
	var pw [16]byte
	_, _ = rand.Read(pw[:])
	l := &hostLab{t: t, h: h, name: instanceName(t), dir: dir, password: hex.EncodeToString(pw[:]),
		nets: map[string]string{}, ids: map[string]string{}}
	t.Cleanup(l.teardown)
	return l
}

// teardown prints every container's log when the test failed, then
// removes the containers and the networks.
func (l *hostLab) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if l.bb != nil {
		_ = l.bb.Close()
	}
	for host, id := range l.ids {
		if l.t.Failed() {
			out := l.logs(ctx, host)
			if len(out) > 30000 {
				out = "...\n" + out[len(out)-30000:]
			}
			l.t.Logf("==== %s ====\n%s", host, out)
		}
		if _, err := l.h.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true}); err != nil {
			l.t.Errorf("cleanup: remove %s: %v", host, err)
		}
	}
	for host, n := range l.nets {
		if _, err := l.h.cli.NetworkRemove(ctx, n, client.NetworkRemoveOptions{}); err != nil {
			l.t.Errorf("cleanup: remove the network of %s: %v", host, err)
		}
	}
}

func (l *hostLab) labels(component string) map[string]string {
	return map[string]string{docker.LabelInstance: l.name, docker.LabelComponent: component}
}

// network creates the private network of host.
func (l *hostLab) network(host string) string {
	l.t.Helper()
	name := l.name + "-" + host
	if _, err := l.h.cli.NetworkCreate(context.Background(), name, client.NetworkCreateOptions{Driver: "bridge",
		Labels: l.labels(host)}); err != nil {
		l.t.Fatalf("create network %s: %v", name, err)
	}
	l.nets[host] = name
	return name
}

// redisURL is the URL the daemons use: Redis answers as "redis" on every
// host's network.
func (l *hostLab) redisURL() string {
	return (&url.URL{Scheme: "redis", User: url.UserPassword("", l.password), Host: "redis:6379", Path: "/0"}).String()
}

// run creates and starts host's container on the network of net (its own,
// except for Redis, which is then attached to every other network).
func (l *hostLab) run(host, net string, cfg *container.Config, mounts []mount.Mount, port string) string {
	l.t.Helper()
	ctx := context.Background()
	cfg.Hostname = host
	cfg.Labels = l.labels(host)
	hc := &container.HostConfig{Mounts: mounts, SecurityOpt: []string{"no-new-privileges:true"}}
	if port != "" {
		p := network.MustParsePort(port)
		cfg.ExposedPorts = network.PortSet{p: struct{}{}}
		hc.PortBindings = network.PortMap{p: {{HostIP: netip.MustParseAddr("127.0.0.1")}}}
	}
	var aliases []string
	if host == "redis" {
		aliases = []string{"redis"}
	}
	res, err := l.h.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: l.name + "-" + host, Config: cfg, HostConfig: hc,
		NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{net: {Aliases: aliases}}}})
	if err != nil {
		l.t.Fatalf("create %s: %v", host, err)
	}
	l.ids[host] = res.ID
	if host == "redis" {
		for other, n := range l.nets {
			if other == host {
				continue
			}
			if _, err := l.h.cli.NetworkConnect(ctx, n, client.NetworkConnectOptions{Container: res.ID,
				EndpointConfig: &network.EndpointSettings{Aliases: aliases}}); err != nil {
				l.t.Fatalf("attach redis to the network of %s: %v", other, err)
			}
		}
	}
	if _, err := l.h.cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		l.t.Fatalf("start %s: %v", host, err)
	}
	return res.ID
}

// publishedPort is the loopback port Docker published port of host on.
func (l *hostLab) publishedPort(host, port string) string {
	l.t.Helper()
	res, err := l.h.cli.ContainerInspect(context.Background(), l.ids[host], client.ContainerInspectOptions{})
	if err != nil {
		l.t.Fatal(err)
	}
	for _, b := range res.Container.NetworkSettings.Ports[network.MustParsePort(port)] {
		if b.HostPort != "" {
			return b.HostPort
		}
	}
	l.t.Fatalf("%s: port %s not published", host, port)
	return ""
}

// startRedis starts Redis, attached to every network made so far, and
// connects the test's blackboard client through its published port.
func (l *hostLab) startRedis() {
	l.t.Helper()
	l.run("redis", l.network("redis"), &container.Config{Image: config.DefaultRedisImage,
		Cmd: []string{"redis-server", "--requirepass", l.password, "--appendonly", "no", "--save", ""}}, nil, "6379/tcp")
	hostURL := (&url.URL{Scheme: "redis", User: url.UserPassword("", l.password),
		Host: "127.0.0.1:" + l.publishedPort("redis", "6379/tcp"), Path: "/0"}).String()
	eventually.True(l.t, time.Minute, "Redis to answer", func() bool {
		bb, err := blackboard.Dial(context.Background(), hostURL, blackboard.Options{Instance: l.name})
		if err != nil {
			return false
		}
		l.bb = bb
		return true
	})
}

// daemonEnv is what every daemon container gets.
func (l *hostLab) daemonEnv() []string {
	return []string{"SETT_CONFIG=/etc/sett/sett.yml", "SETT_INSTANCE=" + l.name, "SETT_REDIS_URL=" + l.redisURL(),
		"SETT_LOG_FORMAT=json"}
}

func (l *hostLab) configMount() mount.Mount {
	return mount.Mount{Type: mount.TypeBind, Source: filepath.Join(l.dir, "sett.yml"), Target: "/etc/sett/sett.yml", ReadOnly: true}
}

// startOrchestrator starts the orchestrator on its own host.
func (l *hostLab) startOrchestrator() {
	l.t.Helper()
	l.run("orchestrator", l.nets["orchestrator"], &container.Config{Image: "sett-orchestrator:local",
		Env: append(l.daemonEnv(), "SETT_HTTP_ADDR=:8080")}, []mount.Mount{l.configMount()}, "")
}

// startCub starts one replica of agent on host, under its own consumer
// name, with the shared workspace.
func (l *hostLab) startCub(host, agent string) {
	l.t.Helper()
	l.run(host, l.nets[host], &container.Config{Image: "sett-cub:local",
		Env: append(l.daemonEnv(), "SETT_AGENT="+agent, "SETT_CUB_CONSUMER="+agent+"-"+host,
			"SETT_WORKSPACE=/workspace", "SETT_HTTP_ADDR=:8081", "HOME=/tmp")},
		[]mount.Mount{{Type: mount.TypeBind, Source: l.dir, Target: "/workspace"}, l.configMount()}, "")
}

// exec runs cmd in host's container and returns its exit code.
func (l *hostLab) exec(host string, cmd ...string) int {
	l.t.Helper()
	ctx := context.Background()
	ex, err := l.h.cli.ExecCreate(ctx, l.ids[host], client.ExecCreateOptions{Cmd: cmd})
	if err != nil {
		l.t.Fatalf("exec in %s: %v", host, err)
	}
	if _, err := l.h.cli.ExecStart(ctx, ex.ID, client.ExecStartOptions{Detach: true}); err != nil {
		l.t.Fatalf("exec in %s: %v", host, err)
	}
	var res client.ExecInspectResult
	eventually.True(l.t, 30*time.Second, strings.Join(cmd, " ")+" to end in "+host, func() bool {
		res, err = l.h.cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
		if err != nil {
			l.t.Fatal(err)
		}
		return !res.Running
	})
	return res.ExitCode
}

// ready reports whether host's cub answers /readyz (asked from inside its
// container, which needs no network beyond its own loopback).
func (l *hostLab) ready(host string) bool {
	return l.exec(host, "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8081/readyz") == 0
}

// cut disconnects host from its network: it keeps running, cut off from
// Redis and every other host.
func (l *hostLab) cut(host string) {
	l.t.Helper()
	if _, err := l.h.cli.NetworkDisconnect(context.Background(), l.nets[host],
		client.NetworkDisconnectOptions{Container: l.ids[host], Force: true}); err != nil {
		l.t.Fatalf("cut %s off: %v", host, err)
	}
}

// reconnect attaches host to its network again.
func (l *hostLab) reconnect(host string) {
	l.t.Helper()
	if _, err := l.h.cli.NetworkConnect(context.Background(), l.nets[host],
		client.NetworkConnectOptions{Container: l.ids[host]}); err != nil {
		l.t.Fatalf("reconnect %s: %v", host, err)
	}
}

// logs returns host's container log.
func (l *hostLab) logs(ctx context.Context, host string) string {
	rc, err := l.h.cli.ContainerLogs(ctx, l.ids[host], client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "logs: " + err.Error()
	}
	defer rc.Close()
	var b bytes.Buffer
	if _, err := stdcopy.StdCopy(&b, &b, rc); err != nil {
		return b.String() + "\nlogs: " + err.Error()
	}
	return b.String()
}

// logLine returns the first line of host's log that holds every one of
// want, "" when there is none.
func (l *hostLab) logLine(host string, want ...string) string {
	sc := bufio.NewScanner(strings.NewReader(l.logs(context.Background(), host)))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
lines:
	for sc.Scan() {
		for _, w := range want {
			if !strings.Contains(sc.Text(), w) {
				continue lines
			}
		}
		return sc.Text()
	}
	return ""
}

// logHas reports whether host's log has a line holding every one of want.
func (l *hostLab) logHas(host string, want ...string) bool { return l.logLine(host, want...) != "" }

// logTime is the time a daemon's JSON log line was written.
func logTime(t testing.TB, line string) time.Time {
	t.Helper()
	var v struct {
		Time time.Time `json:"time"`
	}
	if err := json.Unmarshal([]byte(line), &v); err != nil || v.Time.IsZero() {
		t.Fatalf("log line without a time (%v): %s", err, line)
	}
	return v.Time
}

// stamps returns what host's tool runs stamped: "start <claim>" and
// "finish <claim>" lines.
func (l *hostLab) stamps(host string) []string {
	b, err := os.ReadFile(filepath.Join(l.dir, "stamps", host))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		l.t.Fatal(err)
	}
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}

// has reports whether host stamped line.
func (l *hostLab) has(host, line string) bool {
	for _, s := range l.stamps(host) {
		if s == line {
			return true
		}
	}
	return false
}

// count is how many times any host stamped line.
func (l *hostLab) count(line string) int {
	n := 0
	for host := range l.ids {
		for _, s := range l.stamps(host) {
			if s == line {
				n++
			}
		}
	}
	return n
}

// event returns the first event of type typ that match accepts, waiting
// for it up to timeout.
func (l *hostLab) event(typ blackboard.EventType, timeout time.Duration, match func(blackboard.Event) bool) blackboard.Event {
	l.t.Helper()
	var found blackboard.Event
	eventually.True(l.t, timeout, "a "+string(typ)+" event", func() bool {
		after := "0"
		for {
			evs, err := l.bb.ReadEvents(context.Background(), after, 1000, 0)
			if err != nil {
				l.t.Fatal(err)
			}
			if len(evs) == 0 {
				return false
			}
			for _, e := range evs {
				after = e.StreamID
				if e.Type == typ && match(e) {
					found = e
					return true
				}
			}
		}
	})
	return found
}

// TestCutOffHostLosesItsClaimToAReplicaElsewhere: Redis, the orchestrator
// and two replicas of one agent each run on their own host. The host
// whose replica runs the tool is cut off mid-tool: its cub stops the tool
// before its lease expires, the claim is granted again to the replica on
// the other host, the work completes once, and the cut-off replica's
// grant token is refused from then on. Reconnected, the replica is healthy
// and takes work again. The test logs the time from the cut-off to the
// re-grant and to the workflow's completion.
func TestCutOffHostLosesItsClaimToAReplicaElsewhere(t *testing.T) {
	t.Parallel()
	h := setup(t)
	l := newHostLab(t, h, `version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: `+hostsLeaseTTL.String()+`
agents:
  worker:
    image: sett-cub:local
    command: ["sh", "-c", `+quoteYAML(hostsTool)+`]
    consumes: ["GoalDefined"]
    workspace: {mode: rw}
`)
	for _, host := range []string{"orchestrator", "host-a", "host-b"} {
		l.network(host)
	}
	l.startRedis()
	l.startCub("host-a", "worker")
	l.startCub("host-b", "worker")
	eventually.True(t, time.Minute, "both cubs to be ready", func() bool { return l.ready("host-a") && l.ready("host-b") })
	l.startOrchestrator()
	ctx := context.Background()

	// One goal; whichever replica runs its tool is the one cut off.
	goal := blackboard.NewGoal("Survive a cut cable", 0, "user", nil)
	if err := l.bb.CreateArtefact(ctx, goal, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	wf := goal.ID
	var victim, other string
	eventually.True(t, time.Minute, "a replica to start the tool", func() bool {
		for _, host := range []string{"host-a", "host-b"} {
			if len(l.stamps(host)) > 0 {
				victim = host
				return true
			}
		}
		return false
	})
	other = map[string]string{"host-a": "host-b", "host-b": "host-a"}[victim]
	claimID, err := l.bb.ClaimForArtefact(ctx, goal.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !l.has(victim, "start "+claimID) {
		t.Fatalf("%s stamped %v, want the start of claim %s", victim, l.stamps(victim), claimID)
	}
	// The token the victim's grant carries: what its late result would be
	// written with.
	st, err := l.bb.GetClaimState(ctx, claimID, wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	zombieToken := st.Grants["worker"]
	if zombieToken == "" {
		t.Fatalf("claim %s has no grant for worker: %+v", claimID, st.Grants)
	}

	cutAt := time.Now()
	l.cut(victim)
	// Let the tool finish: the victim's copy, if its cub has not stopped it
	// yet, finishes while cut off and its result has nowhere to go; the
	// re-granted copy finishes at once.
	if err := os.WriteFile(filepath.Join(l.dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	regrant := l.event(blackboard.EventLeaseLost, time.Minute, func(e blackboard.Event) bool { return e.ClaimID == claimID })
	w := stackWait(t, l.bb, wf)
	if w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: status %s (%s), want completed", wf, w.Status, w.Outcome)
	}
	done := l.event(blackboard.EventWorkflowCompleted, time.Minute, func(e blackboard.Event) bool { return e.WorkflowID == wf })
	t.Logf("hosts: cut-off → re-grant %.2f s, → completed %.2f s",
		time.UnixMilli(regrant.TsMs).Sub(cutAt).Seconds(), time.UnixMilli(done.TsMs).Sub(cutAt).Seconds())

	// Granted twice: first to the victim (token zombieToken), then, its
	// lease lost, again to the agent, whose other replica ran it.
	if regrant.Agent != "worker" || regrant.Field("attempt") == zombieToken {
		t.Errorf("re-grant event %+v: want a new attempt for worker (the first had token %s)", regrant, zombieToken)
	}
	if !l.has(other, "start "+claimID) || !l.has(other, "finish "+claimID) {
		t.Errorf("%s stamped %v: want it to have run claim %s to the end", other, l.stamps(other), claimID)
	}
	if n := l.count("start " + claimID); n != 2 {
		t.Errorf("the tool started %d times on claim %s, want twice (once per grant): %s %v, %s %v",
			n, claimID, victim, l.stamps(victim), other, l.stamps(other))
	}
	// The victim's cub gave the grant up — stopped its tool, or its
	// attempts to write the result — before the claim was granted again:
	// the two copies never overlap.
	if fence := l.logLine(victim, claimID, "stopping the tool at once"); fence == "" {
		t.Errorf("%s's cub never said it stopped the work of claim %s it could not renew", victim, claimID)
	} else if at := logTime(t, fence); !at.Before(time.UnixMilli(regrant.TsMs)) {
		t.Errorf("%s's cub gave the grant up at %s, after the re-grant at %s", victim,
			at.Format(time.StampMilli), time.UnixMilli(regrant.TsMs).Format(time.StampMilli))
	}
	if l.has(victim, "finish "+claimID) {
		t.Logf("hosts: %s's tool finished while cut off; its result never landed", victim)
	}

	// Exactly one result, written under the new grant, by the other host.
	results := byType(l.artefactsOf(wf))["Result"]
	if len(results) != 1 {
		t.Fatalf("%d Result artefacts, want exactly one: %v", len(results), types(l.artefactsOf(wf)))
	}
	res := results[0]
	if res.Metadata["token"] == zombieToken || res.Payload != "done on "+other {
		t.Errorf("the result %s has token %s and says %q; want the re-grant's token and %q",
			res.ID, res.Metadata["token"], res.Payload, "done on "+other)
	}
	st, err = l.bb.GetClaimState(ctx, claimID, wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Outputs["worker"] != res.ID || st.Claim.Status != blackboard.ClaimComplete || st.Claim.Attempts != 2 {
		t.Errorf("claim %s: status %s, output %s, %d grant attempts; want complete with %s after 2",
			claimID, st.Claim.Status, st.Outputs["worker"], st.Claim.Attempts, res.ID)
	}

	// Reconnected, the victim's late result is refused by its grant token.
	// The cub never sends it itself (it fences itself when it cannot renew
	// its lease, before the lease can expire), so the test writes the
	// result the cub would have written, with the victim's real token, as
	// the late packet of a zombie would arrive.
	l.reconnect(victim)
	late := &blackboard.Artefact{ID: blackboard.NewID(), Version: 1, StructuralType: blackboard.StructuralStandard,
		Type: "Result", Payload: "done on " + victim, SourceArtefacts: []string{goal.ID}, ProducedByRole: "worker",
		ProducedByAgent: "worker", WorkflowID: wf, ClaimID: claimID, Depth: 1,
		Metadata: map[string]string{"grant": string(blackboard.GrantExclusive), "token": zombieToken}}
	late.LogicalID = late.ID
	if err := l.bb.CreateArtefact(ctx, late, blackboard.WriteAuth{GrantToken: zombieToken}); !errors.Is(err, blackboard.ErrStaleGrant) {
		t.Errorf("the zombie's late result: %v, want ErrStaleGrant", err)
	}
	// And the cub that kept the old grant's inbox entry finds it stale
	// and drops it (whichever replica reclaims it first).
	eventually.True(t, time.Minute, "the old grant's entry to be dropped as re-issued", func() bool {
		return l.logHas(victim, claimID, "grant re-issued; dropping this copy") ||
			l.logHas(other, claimID, "grant re-issued; dropping this copy")
	})
	if n := len(byType(l.artefactsOf(wf))["Result"]); n != 1 {
		t.Errorf("%d Result artefacts after the zombie's write, want still one", n)
	}

	// The victim is healthy again and takes work: with the other replica
	// gone, the next goal is its.
	eventually.True(t, time.Minute, victim+" to be ready again", func() bool { return l.ready(victim) })
	timeout := 10
	if _, err := h.cli.ContainerStop(ctx, l.ids[other], client.ContainerStopOptions{Timeout: &timeout}); err != nil {
		t.Fatal(err)
	}
	goal2 := blackboard.NewGoal("Back on the network", 0, "user", nil)
	if err := l.bb.CreateArtefact(ctx, goal2, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	if w := stackWait(t, l.bb, goal2.ID); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s after the reconnect: status %s (%s), want completed", goal2.ID, w.Status, w.Outcome)
	}
	results2 := byType(l.artefactsOf(goal2.ID))["Result"]
	if len(results2) != 1 || results2[0].Payload != "done on "+victim {
		t.Errorf("after the reconnect: results %v, want one done on %s", types(results2), victim)
	}
}

// artefactsOf lists a workflow's artefacts, oldest first (through the
// stack helper, which needs only a blackboard client).
func (l *hostLab) artefactsOf(wf string) []*blackboard.Artefact {
	l.t.Helper()
	s := &stack{t: l.t, bb: l.bb}
	return s.artefacts(wf)
}

// stackWait waits for a workflow to end.
func stackWait(t testing.TB, bb *blackboard.Client, wf string) *blackboard.Workflow {
	t.Helper()
	w, err := stacktest.WaitWorkflow(context.Background(), bb, wf, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// quoteYAML renders s as a double-quoted YAML scalar.
func quoteYAML(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
