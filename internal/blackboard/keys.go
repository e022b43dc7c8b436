package blackboard

// Keys builds every Redis key and pub/sub channel of one instance. It is the
// single place where key names are spelled; the readable forms are what
// operators type into redis-cli.
//
// The zero value is not usable; build one with NewKeys. Keys is a small
// value type, safe for concurrent use.
type Keys struct {
	prefix string
}

// NewKeys returns the key builder for an instance. With hashTag the prefix
// is `sett:{<instance>}:` so that all keys of the instance share one Redis
// Cluster slot; otherwise it is the readable `sett:<instance>:`.
func NewKeys(instance string, hashTag bool) Keys {
	if hashTag {
		return Keys{prefix: "sett:{" + instance + "}:"}
	}
	return Keys{prefix: "sett:" + instance + ":"}
}

// Prefix returns the common prefix of every key of the instance.
func (k Keys) Prefix() string { return k.prefix }

// Artefact is the HASH holding one artefact.
func (k Keys) Artefact(id string) string { return k.prefix + "artefact:" + id }

// Thread is the ZSET of a thread's artefact ids scored by version.
func (k Keys) Thread(logicalID string) string { return k.prefix + "thread:" + logicalID }

// Claim is the HASH holding one claim.
func (k Keys) Claim(id string) string { return k.prefix + "claim:" + id }

// Bids is the HASH of a claim's bids: field agent, value bid.
func (k Keys) Bids(claimID string) string { return k.prefix + "claim:" + claimID + ":bids" }

// Grants is the HASH of a claim's grant tokens: field agent, value the
// attempt number the agent was granted under. A result is accepted only
// with the current token.
func (k Keys) Grants(claimID string) string { return k.prefix + "claim:" + claimID + ":grants" }

// Outputs is the HASH of a claim's results: field agent, value the id of
// the artefact the agent produced for the claim.
func (k Keys) Outputs(claimID string) string { return k.prefix + "claim:" + claimID + ":outputs" }

// Failures is the SET of agents whose result for the claim is a Failure
// artefact, so the orchestrator sees a failure without reading the result.
func (k Keys) Failures(claimID string) string { return k.prefix + "claim:" + claimID + ":failures" }

// ClaimByArtefact is the STRING mapping an artefact to its regular claim,
// which makes claim creation idempotent.
func (k Keys) ClaimByArtefact(artefactID string) string {
	return k.prefix + "claim_by_artefact:" + artefactID
}

// Workflow is the HASH holding one workflow.
func (k Keys) Workflow(id string) string { return k.prefix + "workflow:" + id }

// ArtefactIndex is the ZSET of every artefact id scored by created_at_ms.
func (k Keys) ArtefactIndex() string { return k.prefix + "index:artefacts" }

// WorkflowArtefactIndex is the ZSET of a workflow's artefact ids scored by
// created_at_ms.
func (k Keys) WorkflowArtefactIndex(workflowID string) string {
	return k.prefix + "index:workflow:" + workflowID
}

// WorkflowClaimIndex is the ZSET of a workflow's claim ids scored by
// created_at_ms.
func (k Keys) WorkflowClaimIndex(workflowID string) string {
	return k.prefix + "index:workflow:" + workflowID + ":claims"
}

// WorkflowMemories is the HASH of a workflow's agent memories: field the
// agent name, value its latest memory (JSON with the artefact it came
// with). Written with the result that carries it.
func (k Keys) WorkflowMemories(workflowID string) string {
	return k.prefix + "workflow:" + workflowID + ":memories"
}

// SharedMemory is the HASH of a workflow's shared memory:
// json (the merged document) and rev (bumped by every merge), written
// only by the orchestrator, in the step that ends a phase.
func (k Keys) SharedMemory(workflowID string) string {
	return k.prefix + "workflow:" + workflowID + ":shared_memory"
}

// WorkflowIndex is the ZSET of every workflow id scored by start time.
func (k Keys) WorkflowIndex() string { return k.prefix + "index:workflows" }

// ArtefactIDIndex is the ZSET (all scores 0) of artefact ids, for short-id
// prefix lookups with ZRANGEBYLEX instead of KEYS.
func (k Keys) ArtefactIDIndex() string { return k.prefix + "index:artefact_ids" }

// ClaimIDIndex is the ZSET (all scores 0) of claim ids, for prefix lookups.
func (k Keys) ClaimIDIndex() string { return k.prefix + "index:claim_ids" }

// ActiveClaims is the ZSET of non-final claim ids scored by created_at_ms:
// what the orchestrator reconciles at start and what `sett status` counts.
func (k Keys) ActiveClaims() string { return k.prefix + "index:claims:active" }

// ApprovalIndex is the ZSET of claim ids waiting in pending_approval,
// scored by the time the approval was requested: what `sett approvals`
// lists without a scan.
func (k Keys) ApprovalIndex() string { return k.prefix + "index:approvals" }

// Learnings is the HASH of learnings from human rejections: field the
// learning id, value its JSON. The record of what was learned, whatever
// happens to Agent_Memory.md.
func (k Keys) Learnings() string { return k.prefix + "learnings" }

// LearningIndex is the ZSET of learning ids scored by the time they were
// recorded, oldest first.
func (k Keys) LearningIndex() string { return k.prefix + "index:learnings" }

// ToolMemory is the HASH of what every tool receives besides its claim:
// learnings (Agent_Memory.md as the human left it, or rendered from
// Learnings without a vault), handbook (Company_Handbook.md) and rev,
// bumped on every change so cubs re-read the text only when it changed.
func (k Keys) ToolMemory() string { return k.prefix + "tool_memory" }

// Running is the SET of claim ids that hold grants (counted against
// orchestrator.max_concurrent_claims) from their first grant until they
// end.
func (k Keys) Running() string { return k.prefix + "scheduler:running" }

// Waiting is the ZSET of claims whose next grant waits for capacity or for
// a resume: score minus the claim's priority, member
// "<workflow start ms, 13 digits>:<claim id>", so ZRANGE lists them in
// release order (highest priority first, oldest workflow first).
func (k Keys) Waiting() string { return k.prefix + "scheduler:waiting" }

// Capacity is the HASH of per-agent limits the scheduler enforces: field
// an agent name, value its max_concurrent (tools per replica); field
// _replica_ttl_ms, how long a replica counts as live after its beat;
// _lease_check_ms, when after its delivery a grant's lease is checked.
// Written by the leading orchestrator from sett.yml.
func (k Keys) Capacity() string { return k.prefix + "scheduler:capacity" }

// Control is the HASH of instance-wide switches: paused (present while
// paused), paused_since_ms, paused_by, paused_reason.
func (k Keys) Control() string { return k.prefix + "control" }

// VaultHealth is the HASH in which the leading orchestrator's vault bridge
// reports how its passes go: ok, path, last_error, last_error_at_ms,
// failing_since_ms, last_ok_at_ms, errors_total (see VaultHealth).
func (k Keys) VaultHealth() string { return k.prefix + "vault:health" }

// AgentRunning is the ZSET of claim ids on which the agent holds a grant
// it has not delivered yet (what counts against its capacity), scored by
// when the grant reached its inbox (the lease check counts from there).
func (k Keys) AgentRunning(agent string) string { return k.prefix + "agent:" + agent + ":running" }

// AgentWaiting is the ZSET of grants for the agent that wait for one of
// its slots, ordered like Waiting; each member carries the inbox message.
func (k Keys) AgentWaiting(agent string) string { return k.prefix + "agent:" + agent + ":waiting" }

// AgentReplicas is the ZSET of the agent's cub replicas: member the
// consumer name, score its last beat (Redis clock, ms). Live replicas
// multiply the agent's capacity.
func (k Keys) AgentReplicas(agent string) string { return k.prefix + "agent:" + agent + ":replicas" }

// Events is the STREAM holding the instance's durable, ordered event log.
func (k Keys) Events() string { return k.prefix + "events" }

// OrchestratorQueue is the STREAM of the events the orchestrator acts on
// (new claimable artefacts and results, completed bidding, failed
// workflows, new agents), appended by the same scripts that append the
// audit events. It keeps the orchestrator from waking for every audit
// entry; handled entries are deleted, the audit trail lives in Events.
func (k Keys) OrchestratorQueue() string { return k.prefix + "orchestrator:queue" }

// DeadLetters is the STREAM of orchestrator queue entries whose handling
// failed too many times: each entry holds the event (JSON), the last
// error and the attempts, for `sett errors` to show.
func (k Keys) DeadLetters() string { return k.prefix + "orchestrator:dead_letters" }

// Inbox is the STREAM of bid requests for one agent. Its cubs read it
// whatever their tools are doing: bidding never waits for work.
func (k Keys) Inbox(agent string) string { return k.prefix + "agent:" + agent + ":inbox" }

// AgentGrants is the STREAM of grants for one agent. A cub reads it only
// when it has a free slot, and only as many entries as it has free
// slots, so an idle sibling replica gets the rest.
func (k Keys) AgentGrants(agent string) string { return k.prefix + "agent:" + agent + ":grants" }

// AgentTokens is the HASH of model tokens spent per agent across the
// instance: field agent, value input plus output tokens of its results.
func (k Keys) AgentTokens() string { return k.prefix + "tokens:agents" }

// Timers is the ZSET of durable timers: member claim id, score due time in
// milliseconds (Redis clock).
func (k Keys) Timers() string { return k.prefix + "timers" }

// Agents is the HASH registry of agents: field name, value registration JSON.
func (k Keys) Agents() string { return k.prefix + "agents" }

// Heartbeat is the STRING with a TTL whose existence means the agent's cub
// is alive.
func (k Keys) Heartbeat(agent string) string { return k.prefix + "agent:" + agent + ":heartbeat" }

// Lease is the STRING with a TTL held by a cub while it owns a grant; its
// value is "<grant token>|<consumer>": the grant and the replica holding
// it, so that no second replica can take a lease another one holds.
func (k Keys) Lease(claimID, agent string) string {
	return k.prefix + "lease:" + claimID + ":" + agent
}

// HandBack is the STRING with a TTL a draining cub leaves when it hands a
// grant back unfinished (its value is the grant token): the orchestrator
// grants the work again without counting an attempt, since nothing about
// the work failed. It lives under the lease's name so the cub's ACL
// (lease:*:<agent>) covers it.
func (k Keys) HandBack(claimID, agent string) string {
	return k.prefix + "lease:" + claimID + ":handback:" + agent
}

// Leader is the STRING with a TTL naming the orchestrator that holds the
// leader lease.
func (k Keys) Leader() string { return k.prefix + "orchestrator:leader" }

// Epoch is the STRING counter incremented on every leader change; writes
// carrying an older epoch are refused (fencing).
func (k Keys) Epoch() string { return k.prefix + "orchestrator:epoch" }

// ArtefactEvents is the pub/sub channel announcing new artefacts.
func (k Keys) ArtefactEvents() string { return k.prefix + "artefact_events" }

// ClaimEvents is the pub/sub channel announcing claim changes and bids.
func (k Keys) ClaimEvents() string { return k.prefix + "claim_events" }

// WorkflowEvents is the pub/sub channel announcing workflow starts and ends.
func (k Keys) WorkflowEvents() string { return k.prefix + "workflow_events" }

// AgentEvents is the pub/sub channel announcing work for one agent.
func (k Keys) AgentEvents(agent string) string { return k.prefix + "agent:" + agent + ":events" }
