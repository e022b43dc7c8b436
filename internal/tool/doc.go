// Package tool defines the contract between the cub and an agent's tool and
// runs the tool safely.
//
// A tool is any program: the cub writes one JSON document ([Input]) on its
// stdin and reads one JSON document ([Output]) from its stdout; everything the
// tool wants to log goes to stderr. [ParseOutput] checks what the tool printed
// and explains precisely what is wrong when it is not acceptable.
//
// [Run] executes the tool as a child process in its own process group, with a
// timeout, caps on stdout and stderr and an environment built by
// [ScrubbedEnv]. Whatever happens to the tool, Run returns a [Result] that
// says what went wrong ([FailureKind]) and keeps the tails of both streams so
// that [FailureReport] can render the payload of a Failure artefact.
//
// A tool never outlives its cub: on Linux it gets SIGKILL when the thread
// that started it dies (Run starts and waits for it on one locked thread);
// a [Ledger] records its process group so that the next cub kills what a
// killed one left before it runs anything; and a [Sandbox] runs it in
// private mount and pid namespaces that hide the cub's secrets and end
// with it. As PID 1 of a container the cub reaps adopted orphans with
// [ReapOrphans]; children it starts outside Run go through [RunTracked].
//
// The package knows nothing of Redis: tools never talk to the blackboard, and
// they never receive its credentials.
package tool
