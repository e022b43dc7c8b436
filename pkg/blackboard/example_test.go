package blackboard_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/settdev/sett/pkg/blackboard"
)

// Post a goal: it starts a workflow of the same id, which the
// orchestrator then drives (bids, grants, reviews) while agents work.
// The URL and instance are those `sett status` shows.
func Example_postGoal() {
	ctx := context.Background()
	bb, err := blackboard.Dial(ctx, os.Getenv("SETT_REDIS_URL"), blackboard.Options{Instance: os.Getenv("SETT_INSTANCE")})
	if err != nil {
		log.Fatal(err)
	}
	defer bb.Close()

	goal, err := bb.PostGoal(ctx, blackboard.Goal{Text: "Add a /health endpoint", Priority: 10, By: "alice"})
	if err != nil {
		log.Fatal(err)
	}
	wf, err := bb.GetWorkflow(ctx, goal.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("workflow", wf.ID == goal.ID, wf.Status)
	// Output: workflow true running
}

// Connect as the sett command does, with no settings of the program's
// own: DialEnv resolves the Redis and the instance from the environment,
// the workspace's sett.yml and its instance records, in the order its
// documentation gives. Here SETT_REDIS_URL and SETT_INSTANCE name them,
// as for a program run beside an instance started elsewhere.
func ExampleDialEnv() {
	ctx := context.Background()
	bb, err := blackboard.DialEnv(ctx, blackboard.EnvOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer bb.Close()

	fmt.Println("instance", bb.Instance() == os.Getenv("SETT_INSTANCE"))
	// Output: instance true
}

// Watch a workflow: WatchWorkflow blocks on the event stream (it never
// polls) and ends with the workflow's workflow_completed event; its final
// artefacts are then its results. No orchestrator runs in this example,
// so the workflow is cancelled to end it.
func Example_watchWorkflow() {
	ctx := context.Background()
	bb, err := blackboard.Dial(ctx, os.Getenv("SETT_REDIS_URL"), blackboard.Options{Instance: os.Getenv("SETT_INSTANCE")})
	if err != nil {
		log.Fatal(err)
	}
	defer bb.Close()

	since, err := bb.LastEventID(ctx) // only what comes next
	if err != nil {
		log.Fatal(err)
	}
	goal, err := bb.PostGoal(ctx, blackboard.Goal{Text: "Write the release notes", By: "bob"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := bb.CancelWorkflow(ctx, goal.ID, "bob", "posted twice"); err != nil {
		log.Fatal(err)
	}
	for ev, err := range bb.WatchWorkflow(ctx, goal.ID, since) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Type == blackboard.EventWorkflowCompleted {
			fmt.Printf("%s: %s (%s)\n", ev.Type, ev.Field("status"), ev.Field("reason"))
			continue
		}
		fmt.Println(ev.Type)
	}
	finals, err := bb.FinalArtefacts(ctx, goal.ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range finals {
		fmt.Println("final:", a.Type, a.Summary)
	}
	// Output:
	// workflow_started
	// artefact_created
	// workflow_completed: cancelled (cancelled by bob: posted twice)
	// final: GoalDefined Write the release notes
}

// Decide an approval: an instance whose approvals.required names an
// artefact type holds each such artefact until a person approves or
// rejects it. A rejection needs a reason: the author reworks from it,
// and it becomes a learning (RejectWithoutReason leaves it to a learner
// agent, when the workspace's sett.yml names one). (gatePlan stands in
// for the orchestrator and the planner agent.)
func Example_decideApproval() {
	ctx := context.Background()
	bb, err := blackboard.Dial(ctx, os.Getenv("SETT_REDIS_URL"), blackboard.Options{Instance: os.Getenv("SETT_INSTANCE")})
	if err != nil {
		log.Fatal(err)
	}
	defer bb.Close()

	goal, err := bb.PostGoal(ctx, blackboard.Goal{Text: "Migrate the billing database", By: "carol"})
	if err != nil {
		log.Fatal(err)
	}
	gatePlan(goal.ID)

	pending, err := bb.PendingApprovals(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, req := range pending {
		if req.WorkflowID != goal.ID {
			continue
		}
		fmt.Printf("waiting: %s v%d by %s\n", req.ArtefactType, req.Version, req.ProducedByRole)
		if err := bb.Reject(ctx, req.ArtefactID, "carol", ""); errors.Is(err, blackboard.ErrInvalid) {
			fmt.Println("a rejection needs a reason")
		}
		if err := bb.Reject(ctx, req.ArtefactID, "carol", "keep the old schema readable until the cut-over"); err != nil {
			log.Fatal(err)
		}
		// The decision is on the claim for the audit trail, with the
		// channel it came by.
		cl, err := bb.GetClaim(ctx, req.ClaimID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("recorded: %s by %s via %s\n", cl.Approval.Decision, cl.Approval.By, cl.Approval.Channel)
		// The first decision stands.
		err = bb.Approve(ctx, req.ArtefactID, "dave")
		fmt.Println("approve after the rejection:", errors.Is(err, blackboard.ErrAlreadyDecided))
	}
	// Output:
	// waiting: Plan v1 by planner
	// a rejection needs a reason
	// recorded: rejected by carol via api
	// approve after the rejection: true
}
