package fakellm

// The answers of DemoScript.
const (
	demoPlanV1 = `# Plan: add a /health endpoint

1. Add the handler in the package that serves HTTP.
2. Register it on the router.

## Verification

Run the tests.`
	demoPlanV2 = `# Plan: add a /health endpoint

1. Add ` + "`health.go`" + ` with a handler that answers 200 and {"status":"ok"}.
2. Register it as GET /health next to the other routes.
3. Add ` + "`health_test.go`" + ` that calls the handler and checks status and body.

## Verification

` + "`go test ./...`" + ` passes and ` + "`curl localhost:8080/health`" + ` answers {"status":"ok"}.`
	demoReject      = `{"verdict":"reject","severity":"Major","findings":["Name the files the plan changes.","Say how the endpoint is tested."]}`
	demoApprove     = `{"verdict":"approve","severity":"Minor","findings":[]}`
	demoLearning    = `Name the files a plan changes and how the change is verified; vague plans are rejected.`
	demoSummary     = "# Summary\n\n- The plan was reworked once after review and then approved."
	demoDocument    = "# Document\n\nA document written by the fake model."
	demoCoderAnswer = "Changed the files the plan names."
)

// DemoScript answers the templates that agents/llm ships, telling the roles
// apart by the first line of their system prompt. The reviewer rejects the
// first plan it sees (Major, with findings) and approves everything after
// it; the planner's rework names files. It is what sett-fake-llm serves
// without --script, for `make demo-llm` and the end-to-end tests.
func DemoScript() Script {
	return Script{Rules: []Rule{
		{Name: "planner-rework", Match: []string{"You are the planner", "## Reviews to address"}, Answers: []string{demoPlanV2}},
		{Name: "planner", Match: []string{"You are the planner"}, Answers: []string{demoPlanV1}},
		{Name: "reviewer-plan", Match: []string{"You are a reviewer", "## Work to review: Plan"}, Answers: []string{demoReject, demoApprove}},
		{Name: "reviewer", Match: []string{"You are a reviewer"}, Answers: []string{demoApprove}},
		{Name: "learner", Match: []string{"You are reviewing a rejected"}, Answers: []string{demoLearning}},
		{Name: "summariser", Match: []string{"You are the summariser"}, Answers: []string{demoSummary}},
		{Name: "writer", Match: []string{"You are a writer"}, Answers: []string{demoDocument}},
		{Name: "coder", Match: []string{"You are the coder"}, Answers: []string{demoCoderAnswer}},
	}}
}
