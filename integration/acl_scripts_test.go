package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/acl"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// TestACLUsersThroughTheScripts runs, as each ACL user of an instance on a
// real redis-server with the real scripts, what the user is for, and every
// forbidden write both directly and through a script: ending a workflow,
// changing the leader epoch, trimming or deleting the event log, and
// editing an artefact someone else wrote.
func TestACLUsersThroughTheScripts(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	inst := redistest.Instance(t)
	pw := aclUsers(t, inst, []string{"coder", "reviewer"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	keys := blackboard.NewKeys(inst, false)
	dial := func(user string) (*blackboard.Client, *redis.Client) {
		bb, err := blackboard.DialConn(ctx, blackboard.Conn{URL: srv.URL(), Username: user, Password: pw[user]},
			blackboard.Options{Instance: inst})
		if err != nil {
			t.Fatalf("%s: dial: %v", user, err)
		}
		raw := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: pw[user]})
		t.Cleanup(func() { _ = bb.Close(); _ = raw.Close() })
		return bb, raw
	}
	orchName := acl.Name(inst, acl.RoleOrchestrator, "")
	cubName := acl.Name(inst, acl.RoleCub, "coder")
	humanName := acl.Name(inst, acl.RoleHuman, "")
	readerName := acl.Name(inst, acl.RoleReader, "")
	orch, orchRaw := dial(orchName)
	cub, cubRaw := dial(cubName)
	human, humanRaw := dial(humanName)
	reader, readerRaw := dial(readerName)

	// The orchestrator leads (epoch 1).
	lead, err := orch.AcquireLeadership(ctx, "orchestrator#1", time.Minute)
	if err != nil || !lead.Acquired {
		t.Fatalf("orchestrator: acquire leadership: %+v, %v", lead, err)
	}

	// The human posts a goal: its artefact, workflow and claim records.
	goal := blackboard.NewGoal("Add a /health endpoint", 0, "user", nil)
	if err := human.CreateArtefact(ctx, goal, blackboard.WriteAuth{}); err != nil {
		t.Fatalf("human: post a goal: %v", err)
	}
	wf := goal.ID

	// The orchestrator opens the goal's claim.
	claimID := blackboard.DeriveID("claim", wf)
	if _, err := orch.CreateClaim(ctx, blackboard.NewClaim{Claim: &blackboard.Claim{ID: claimID, ArtefactID: wf, WorkflowID: wf,
		Status: blackboard.ClaimPendingConsensus, ExpectedBidders: []string{"coder"}}, ByArtefact: true, Epoch: lead.Epoch}); err != nil {
		t.Fatalf("orchestrator: open the goal's claim: %v", err)
	}

	// The cub writes an artefact of its own into the workflow, reads the
	// blackboard and beats.
	planID := blackboard.NewID()
	plan := &blackboard.Artefact{ID: planID, LogicalID: planID, Version: 1, WorkflowID: wf,
		StructuralType: blackboard.StructuralStandard, Type: "Plan", ProducedByRole: "coder", ProducedByAgent: "coder",
		Payload: "1. do it", SourceArtefacts: []string{wf}}
	if err := cub.CreateArtefact(ctx, plan, blackboard.WriteAuth{}); err != nil {
		t.Fatalf("cub: write its artefact: %v", err)
	}
	if _, err := cub.GetWorkflow(ctx, wf); err != nil {
		t.Fatalf("cub: read the workflow: %v", err)
	}
	if err := cub.RegisterAgent(ctx, blackboard.Registration{Name: "coder", Consumer: "coder-1", Role: "coder"}, time.Minute); err != nil {
		t.Fatalf("cub: register: %v", err)
	}

	// The reader reads everything.
	for _, id := range []string{wf, plan.ID} {
		if _, err := reader.GetArtefact(ctx, id); err != nil {
			t.Fatalf("reader: read artefact %s: %v", id, err)
		}
	}
	if _, err := reader.ReadEvents(ctx, "0", 10, 0); err != nil {
		t.Fatalf("reader: events: %v", err)
	}

	// A script that would do each forbidden write, loaded by the user
	// itself: the ACL checks each command a script runs.
	evil := func(raw *redis.Client, body string, keys ...string) error {
		sha, err := raw.ScriptLoad(ctx, body).Result()
		if err != nil {
			return err
		}
		return raw.EvalSha(ctx, sha, keys).Err()
	}
	refused := func(who, what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "NOPERM") && !strings.Contains(err.Error(), "can't access") &&
			!strings.Contains(err.Error(), "no permissions") && !strings.Contains(err.Error(), "can't run this command") {
			t.Errorf("%s: %s: %v, want refused by the ACL", who, what, err)
		}
	}
	type rawClient struct {
		name string
		raw  *redis.Client
	}
	for _, u := range []rawClient{{cubName, cubRaw}, {humanName, humanRaw}, {readerName, readerRaw}} {
		// The epoch.
		refused(u.name, "INCR the epoch", u.raw.Incr(ctx, keys.Epoch()).Err())
		refused(u.name, "SET the epoch", u.raw.Set(ctx, keys.Epoch(), "99", 0).Err())
		refused(u.name, "SET the leader lease", u.raw.Set(ctx, keys.Leader(), "me", 0).Err())
		refused(u.name, "a script INCRing the epoch", evil(u.raw, "return redis.call('INCR', KEYS[1])", keys.Epoch()))
		// The event log.
		refused(u.name, "XTRIM events", u.raw.XTrimMaxLen(ctx, keys.Events(), 0).Err())
		refused(u.name, "XDEL an event", u.raw.XDel(ctx, keys.Events(), "0-1").Err())
		refused(u.name, "DEL events", u.raw.Del(ctx, keys.Events()).Err())
		refused(u.name, "a script trimming events", evil(u.raw, "return redis.call('XTRIM', KEYS[1], 'MAXLEN', 0)", keys.Events()))
		// Another's artefact (the goal is the human's, the plan the cub's:
		// no one but the orchestrator changes a written field).
		for _, id := range []string{wf, plan.ID} {
			refused(u.name, "HSET artefact "+id, u.raw.HSet(ctx, keys.Artefact(id), "payload", "rewritten").Err())
			refused(u.name, "HDEL artefact "+id, u.raw.HDel(ctx, keys.Artefact(id), "payload").Err())
			refused(u.name, "DEL artefact "+id, u.raw.Del(ctx, keys.Artefact(id)).Err())
			refused(u.name, "a script rewriting artefact "+id,
				evil(u.raw, "return redis.call('HSET', KEYS[1], 'payload', 'rewritten')", keys.Artefact(id)))
		}
		// Leading through the real script.
		_, err := map[string]*blackboard.Client{cubName: cub, humanName: human, readerName: reader}[u.name].
			AcquireLeadership(ctx, "usurper", time.Minute)
		refused(u.name, "the leader script", err)
	}
	// A written artefact is also refused by the script itself (write-once).
	again := *plan
	again.Payload = "rewritten"
	if err := cub.CreateArtefact(ctx, &again, blackboard.WriteAuth{}); !errors.Is(err, blackboard.ErrExists) {
		t.Errorf("cub: write the plan's id again: %v, want ErrExists", err)
	}

	// Ending a workflow: the cub and the reader cannot, directly or by
	// the real script; the human cancels (epoch -1, an operator's override).
	for _, u := range []rawClient{{cubName, cubRaw}, {readerName, readerRaw}} {
		refused(u.name, "HSET the workflow's status", u.raw.HSet(ctx, keys.Workflow(wf), "status", "failed").Err())
		refused(u.name, "a script ending the workflow",
			evil(u.raw, "return redis.call('HSET', KEYS[1], 'status', 'failed')", keys.Workflow(wf)))
		refused(u.name, "DEL the workflow", u.raw.Del(ctx, keys.Workflow(wf)).Err())
	}
	// awaitApproval puts the goal's claim in (or back out of) the state a
	// decision applies to, as the orchestrator would.
	awaitApproval := func(waiting bool) {
		t.Helper()
		status := blackboard.ClaimPendingConsensus
		if waiting {
			status = blackboard.ClaimPendingApproval
		}
		if err := orchRaw.HSet(ctx, keys.Claim(claimID), "status", string(status)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for name, bb := range map[string]*blackboard.Client{cubName: cub, readerName: reader} {
		_, err := bb.EndWorkflow(ctx, wf, blackboard.WorkflowFailed, "a cub says so", -1)
		refused(name, "the end_workflow script (as an operator)", err)
		_, err = bb.EndWorkflow(ctx, wf, blackboard.WorkflowFailed, "a cub says so", lead.Epoch)
		refused(name, "the end_workflow script (with the leader's epoch)", err)
		_, err = bb.Pause(ctx, name, "a cub pauses", blackboard.ControlFromCLI)
		refused(name, "the control script (pause)", err)
		// The decision is checked against the claim first; a claim that
		// waits for approval gets as far as the script.
		awaitApproval(true)
		err = bb.DecideApproval(ctx, blackboard.Decision{ArtefactID: wf, Decision: blackboard.ApprovalApproved,
			By: "a cub", Channel: blackboard.ChannelCLI})
		awaitApproval(false)
		refused(name, "the decide_approval script", err)
		_, err = bb.RetryClaim(ctx, claimID, name)
		refused(name, "the retry_claim script", err)
		_, err = bb.PurgeWorkflow(ctx, wf, 0, false)
		refused(name, "the purge_workflow script", err)
	}
	if w, err := orch.GetWorkflow(ctx, wf); err != nil || w.Status != blackboard.WorkflowRunning {
		t.Fatalf("after the refused writes the workflow is %+v, %v; want running", w, err)
	}

	// The human's commands pass the scripts' privilege checks: the
	// decision and the retry are refused for what the claim is, not for
	// who asks; pause, resume and cancel go through.
	err = human.DecideApproval(ctx, blackboard.Decision{ArtefactID: wf, Decision: blackboard.ApprovalApproved,
		By: "alice", Channel: blackboard.ChannelCLI})
	if err != nil && strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("human: decide: %v", err)
	}
	if _, err := human.RetryClaim(ctx, claimID, "alice"); err != nil && strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("human: retry: %v", err)
	}
	if _, err := human.Pause(ctx, "alice", "lunch", blackboard.ControlFromCLI); err != nil {
		t.Errorf("human: pause: %v", err)
	}
	if _, err := human.Resume(ctx, "alice", blackboard.ControlFromCLI); err != nil {
		t.Errorf("human: resume: %v", err)
	}
	_, err = human.PurgeWorkflow(ctx, wf, 0, false)
	refused(humanName, "the purge_workflow script", err)
	if ended, err := human.EndWorkflow(ctx, wf, blackboard.WorkflowCancelled, "alice cancelled", -1); err != nil || !ended {
		t.Fatalf("human: cancel the workflow: %v, %v", ended, err)
	}
	if w, err := reader.GetWorkflow(ctx, wf); err != nil || w.Status != blackboard.WorkflowCancelled {
		t.Fatalf("after the human's cancel the workflow is %+v, %v; want cancelled", w, err)
	}
	// The epoch is the orchestrator's alone, and still 1.
	if e, err := readerRaw.Get(ctx, keys.Epoch()).Result(); err != nil || e != "1" {
		t.Errorf("epoch %q, %v; want 1", e, err)
	}
}
