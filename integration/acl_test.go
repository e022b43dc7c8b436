package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/acl"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// aclUsers creates the instance's ACL users on the shared server and
// returns each user's password by name.
func aclUsers(t *testing.T, instance string, agents []string) map[string]string {
	t.Helper()
	raw := redistest.Raw(t)
	ctx := context.Background()
	pw := map[string]string{}
	for _, u := range acl.Users(instance, false, agents) {
		p, err := acl.NewPassword()
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Do(ctx, append([]any{"ACL"}, u.Args(p)...)...).Err(); err != nil {
			t.Fatalf("%s: %v", u.SetUser("***"), err)
		}
		pw[u.Name] = p
		name := u.Name
		t.Cleanup(func() { _ = raw.Do(context.Background(), "ACL", "DELUSER", name).Err() })
	}
	return pw
}

// TestACLRolesAllowAndRefuse checks each role's allowed and refused
// commands against a real Redis.
func TestACLRolesAllowAndRefuse(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	inst := redistest.Instance(t)
	pw := aclUsers(t, inst, []string{"planner", "reviewer"})
	ctx := context.Background()
	as := func(user string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: pw[user]})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	own := "sett:" + inst + ":"
	other := "sett:someone-else:"
	type check struct {
		name    string
		args    []any
		allowed bool
	}
	denied := func(name string, args ...any) check { return check{name: name, args: args} }
	ok := func(name string, args ...any) check { return check{name: name, args: args, allowed: true} }
	admin := []check{
		denied("FLUSHALL", "FLUSHALL"), denied("FLUSHDB", "FLUSHDB"), denied("CONFIG GET", "CONFIG", "GET", "*"),
		denied("KEYS", "KEYS", "*"), denied("SHUTDOWN", "SHUTDOWN"),
		denied("SCRIPT FLUSH", "SCRIPT", "FLUSH"), denied("ACL SETUSER", "ACL", "SETUSER", "x"),
		denied("other instance read", "GET", other+"control"), denied("other instance write", "HSET", other+"control", "a", "b"),
	}
	roles := map[string][]check{
		acl.Name(inst, acl.RoleOrchestrator, ""): append([]check{
			ok("HSET own", "HSET", own+"control", "x", "1"), ok("XADD agent inbox", "XADD", own+"agent:reviewer:inbox", "*", "a", "b"),
			ok("PUBLISH own channel", "PUBLISH", own+"claim_events", "x"), denied("PUBLISH other channel", "PUBLISH", other+"claim_events", "x"),
		}, admin...),
		acl.Name(inst, acl.RoleCub, "planner"): append([]check{
			ok("read any own key", "HGETALL", own+"claim:abc"), ok("write own heartbeat", "SET", own+"agent:planner:heartbeat", "1"),
			ok("append own inbox ack", "XADD", own+"events", "*", "a", "b"),
			denied("write another agent's inbox", "XADD", own+"agent:reviewer:inbox", "*", "a", "b"),
			denied("write another agent's lease", "SET", own+"lease:c1:reviewer", "x"),
			denied("leader lease", "SET", own+"orchestrator:leader", "me"),
		}, admin...),
		acl.Name(inst, acl.RoleReader, ""): append([]check{
			ok("HGETALL", "HGETALL", own+"workflow:w"), ok("XRANGE", "XRANGE", own+"events", "-", "+"),
			ok("SUBSCRIBE-able PING", "PING"),
			denied("HSET", "HSET", own+"control", "paused", "1"), denied("EVALSHA", "EVALSHA", "0000000000000000000000000000000000000000", "0"),
			denied("DEL", "DEL", own+"events"),
		}, admin...),
	}
	admin0 := redistest.Raw(t)
	for user, checks := range roles {
		// DEBUG is refused by the server's enable-debug-command before
		// ACLs are consulted, so ask the ACL itself.
		if res, err := admin0.Do(ctx, "ACL", "DRYRUN", user, "DEBUG", "SLEEP", "0").Text(); err != nil || !strings.Contains(res, "no permissions") {
			t.Errorf("%s: ACL DRYRUN DEBUG = %q, %v; want no permissions", user, res, err)
		}
		c := as(user)
		for _, ch := range checks {
			err := c.Do(ctx, ch.args...).Err()
			if errors.Is(err, redis.Nil) {
				err = nil
			}
			isNoPerm := err != nil && strings.HasPrefix(err.Error(), "NOPERM")
			switch {
			case ch.allowed && err != nil:
				t.Errorf("%s: %s: %v, want allowed", user, ch.name, err)
			case !ch.allowed && !isNoPerm:
				t.Errorf("%s: %s: %v, want NOPERM", user, ch.name, err)
			}
		}
	}
}

// TestWorkflowWithRestrictedUsers runs the three-phase pipeline with the
// orchestrator and every cub on its own ACL user, then reads it back as
// the read-only user, which cannot write.
func TestWorkflowWithRestrictedUsers(t *testing.T) {
	t.Parallel()
	agents := []string{"auditor", "coder", "planner", "reviewer"}
	var pw map[string]string
	var inst string
	s := stacktest.New(t, pipeline, stacktest.Options{ProcEnvFunc: func(name string) []string {
		user := acl.Name(inst, acl.RoleOrchestrator, "")
		if agent, ok := strings.CutPrefix(name, "cub-"); ok {
			user = acl.Name(inst, acl.RoleCub, agent)
		}
		return []string{"SETT_REDIS_USERNAME=" + user, "SETT_REDIS_PASSWORD=" + pw[user]}
	}})
	inst = s.Instance
	pw = aclUsers(t, inst, agents)
	// No command of the run was refused: the narrowed users hold what
	// the pipeline needs.
	t.Cleanup(func() {
		if denials := aclDenials(t, inst); len(denials) > 0 {
			t.Errorf("the ACL refused %d commands during the run: %v", len(denials), denials)
		}
	})
	s.Up(agents...)
	wf := s.PostGoal("Add a /health endpoint")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	if n := len(s.Artefacts(wf)); n != 5 {
		t.Fatalf("%d artefacts, want 5 (goal, plan, review, audit note, code change)", n)
	}
	// The reviewer, the one agent asked to bid on the Plan (the others'
	// bids are decided by their rules), was granted the review by its own
	// bid's script: the grant in the bid needs no key a cub's user lacks.
	plans := stacktest.OfType(s.Artefacts(wf), "Plan")
	if len(plans) != 1 {
		t.Fatalf("%d Plan artefacts, want 1", len(plans))
	}
	planClaim, err := s.BB.ClaimForArtefact(context.Background(), plans[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, e := range s.Events(blackboard.EventClaimGranted) {
		if e.ClaimID == planClaim && e.Field("phase") == "review" {
			by = append(by, e.Field("granted_by"))
		}
	}
	if len(by) != 1 || by[0] != "last_bid" {
		t.Errorf("the Plan's review claim_granted events say granted_by %q, want one, by last_bid", by)
	}

	reader := acl.Name(inst, acl.RoleReader, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bb, err := blackboard.DialConn(ctx, blackboard.Conn{URL: s.Redis.URL(), Username: reader, Password: pw[reader]},
		blackboard.Options{Instance: inst})
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	w, err := bb.GetWorkflow(ctx, wf)
	if err != nil || w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("reader: workflow %+v, %v", w, err)
	}
	if _, err := bb.ReadEvents(ctx, "0", 10, 0); err != nil {
		t.Fatalf("reader: events: %v", err)
	}
	if _, err := bb.Pause(ctx, "reader", "should be refused", blackboard.ControlFromCLI); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("reader pausing the instance: %v, want NOPERM", err)
	}
}

// aclDenials are the server's ACL LOG entries of the instance's users but
// the reader (whose refusals the tests provoke), as
// "user: reason object (context)".
func aclDenials(t *testing.T, inst string) []string {
	t.Helper()
	entries, err := redistest.Raw(t).Do(context.Background(), "ACL", "LOG", "128").Slice()
	if err != nil {
		t.Fatalf("ACL LOG: %v", err)
	}
	var out []string
	for _, e := range entries {
		m := map[string]string{}
		if kv, ok := e.([]any); ok {
			for i := 0; i+1 < len(kv); i += 2 {
				m[fmt.Sprint(kv[i])] = fmt.Sprint(kv[i+1])
			}
		} else if kv, ok := e.(map[any]any); ok {
			for k, v := range kv {
				m[fmt.Sprint(k)] = fmt.Sprint(v)
			}
		}
		if strings.Contains(m["username"], "-"+inst+"-") && !strings.HasSuffix(m["username"], "-reader") {
			out = append(out, m["username"]+": "+m["reason"]+" "+m["object"]+" ("+m["context"]+")")
		}
	}
	return out
}

// terminalResult: the planner's Plan goes to the coder, whose result is
// Terminal (it ends its chain: no claim), so it closes the workflow's
// last open item.
const terminalResult = `version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: 3s
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  coder:
    command:
      - /bin/sh
      - -c
      - |
        cat >/dev/null
        echo '{"artefact_type":"CodeChange","structural_type":"Terminal","artefact_payload":"done","summary":"done"}'
    bidding_strategy: exclusive
    consumes: ["Plan"]
`

// TestLastResultWithRestrictedUsers: a claim's result that closes its
// workflow's last open item (the coder's Terminal CodeChange) completes
// the workflow. With a cub's user the result's script
// may not end the workflow itself (no end_workflow privilege): it leaves
// the end due and the orchestrator ends it. Nothing is refused by Redis on
// the way (a refusal mid-script would leave the script's earlier writes).
func TestLastResultWithRestrictedUsers(t *testing.T) {
	t.Parallel()
	agents := []string{"coder", "planner"}
	var pw map[string]string
	var inst string
	s := stacktest.New(t, terminalResult, stacktest.Options{ProcEnvFunc: func(name string) []string {
		user := acl.Name(inst, acl.RoleOrchestrator, "")
		if agent, ok := strings.CutPrefix(name, "cub-"); ok {
			user = acl.Name(inst, acl.RoleCub, agent)
		}
		return []string{"SETT_REDIS_USERNAME=" + user, "SETT_REDIS_PASSWORD=" + pw[user]}
	}})
	inst = s.Instance
	pw = aclUsers(t, inst, agents)
	t.Cleanup(func() {
		if denials := aclDenials(t, inst); len(denials) > 0 {
			t.Errorf("the ACL refused %d commands during the run: %v", len(denials), denials)
		}
	})
	s.Up(agents...)
	wf := s.PostGoal("Add a /health endpoint")
	w := s.WaitWorkflow(wf, wait)
	if w.Status != blackboard.WorkflowCompleted || !strings.HasPrefix(w.Outcome, "all work complete") {
		t.Fatalf("workflow %s (%s), want completed: all work complete", w.Status, w.Outcome)
	}
	var ends int
	for _, e := range s.Events(blackboard.EventWorkflowCompleted) {
		if e.WorkflowID == wf {
			ends++
		}
	}
	if ends != 1 {
		t.Errorf("%d workflow_completed events, want 1", ends)
	}
	var byResult []string
	for _, e := range s.Events(blackboard.EventClaimCompleted) {
		if e.WorkflowID == wf {
			byResult = append(byResult, e.Field("completed_by"))
		}
	}
	if !slices.Contains(byResult, "result") {
		t.Errorf("claims completed by %q: the test wants one completed by its result's script", byResult)
	}
}
