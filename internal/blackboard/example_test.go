package blackboard_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// Post a goal: the goal artefact starts a workflow of the same id, which
// the orchestrator then drives (bids, grants, reviews) while agents work.
// The URL and instance are those `sett status` shows.
func Example_postGoal() {
	ctx := context.Background()
	bb, err := blackboard.Dial(ctx, os.Getenv("SETT_REDIS_URL"), blackboard.Options{Instance: os.Getenv("SETT_INSTANCE")})
	if err != nil {
		log.Fatal(err)
	}
	defer bb.Close()

	goal := blackboard.NewGoal("Add a /health endpoint", 10, "alice", nil)
	if err := bb.CreateArtefact(ctx, goal, blackboard.WriteAuth{}); err != nil {
		log.Fatal(err)
	}
	wf, err := bb.GetWorkflow(ctx, goal.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("workflow", wf.ID == goal.ID, wf.Status)
	// Output: workflow true running
}

// Watch a workflow: the event stream is the audit log; a reader keeps the
// stream id of the last event it saw and blocks for the next ones, so it
// never misses one and never polls.
func Example_watchWorkflow() {
	ctx := context.Background()
	bb, err := blackboard.Dial(ctx, os.Getenv("SETT_REDIS_URL"), blackboard.Options{Instance: os.Getenv("SETT_INSTANCE")})
	if err != nil {
		log.Fatal(err)
	}
	defer bb.Close()

	goal := blackboard.NewGoal("Write the release notes", 0, "bob", nil)
	if err := bb.CreateArtefact(ctx, goal, blackboard.WriteAuth{}); err != nil {
		log.Fatal(err)
	}
	after := "0" // from the start; "$" for only what comes next
	for {
		// Blocks up to a second for new events; a real watcher goes on
		// until the workflow's workflow_completed or workflow_failed.
		events, err := bb.ReadEvents(ctx, after, 100, time.Second)
		if err != nil {
			log.Fatal(err)
		}
		if len(events) == 0 {
			return // nothing more: no orchestrator runs in this example
		}
		for _, e := range events {
			after = e.StreamID
			if e.WorkflowID == goal.ID {
				fmt.Println(e.Type)
			}
		}
	}
	// Output:
	// workflow_started
	// artefact_created
}
