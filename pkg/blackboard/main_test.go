package blackboard_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	engine "github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// TestMain gives the examples a Redis of their own, as SETT_REDIS_URL and
// SETT_INSTANCE (what a client of a running instance reads); with -short,
// which promises to need nothing running, they are skipped like the
// tests that need Redis.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		_ = flag.Set("test.skip", "^Example")
		redistest.Main(m)
	}
	srv, err := redistest.NewServer(redistest.ServerOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("SETT_REDIS_URL", srv.URL())
	os.Setenv("SETT_INSTANCE", "examples")
	code := redistest.Run(m)
	srv.Stop()
	os.Exit(code)
}

// gatePlan does the orchestrator's part of Example_decideApproval
// through the engine: a plan for the goal, and the plan's claim waiting
// for a human, as an instance whose approvals.required names "Plan"
// creates it. It returns the plan's id.
func gatePlan(goalID string) string {
	ctx := context.Background()
	eng, err := engine.Dial(ctx, os.Getenv("SETT_REDIS_URL"), engine.Options{Instance: os.Getenv("SETT_INSTANCE")})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	lead, err := eng.AcquireLeadership(ctx, "example-orchestrator", time.Minute)
	if err != nil || !lead.Leading {
		panic(fmt.Sprintf("lead: %+v, %v", lead, err))
	}
	id := engine.NewID()
	plan := &engine.Artefact{ID: id, LogicalID: id, Version: 1, WorkflowID: goalID, Depth: 1,
		StructuralType: engine.StructuralStandard, Type: "Plan", Payload: "1. copy 2. switch 3. drop",
		Summary: "three steps", ProducedByRole: "planner", SourceArtefacts: []string{goalID}}
	if err := eng.CreateArtefact(ctx, plan, engine.WriteAuth{}); err != nil {
		panic(err)
	}
	_, err = eng.CreateClaim(ctx, engine.NewClaim{Claim: &engine.Claim{ID: engine.DeriveID("claim", id),
		ArtefactID: id, WorkflowID: goalID, Status: engine.ClaimPendingApproval}, ByArtefact: true, Epoch: lead.Epoch})
	if err != nil {
		panic(err)
	}
	return id
}
