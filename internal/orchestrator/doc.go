// Package orchestrator is Sett's coordination daemon: it turns new
// artefacts into claims, collects bids, grants work in phases (review,
// parallel, exclusive), loops rejected work back to its producer, and ends
// workflows.
//
// The design is level-triggered: an event only names a claim;
// the handler reads that claim's stored state and applies the one next
// step it calls for with a compare-and-set script. Seeing an event twice,
// late or never leads to the same result, because the timers and the
// reconciler revisit every active claim. Nothing a decision needs lives
// only in memory.
//
// Services, one loop each: LeaderLease (only the lease holder acts),
// EventLoop (the durable event stream through a consumer group),
// TimerLoop (bid deadlines and lease checks), Reconciler (start-up and
// periodic sweep), AgentDirectory (which configured agents are alive).
// ClaimAdvancer holds the decisions; Dispatcher runs them concurrently
// while keeping each claim's handling in order.
package orchestrator
