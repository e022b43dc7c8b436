-- submit_bid: record an agent's bid on a claim, once; when it is the last
-- expected bid and the claim's grant plan allows it, grant the claim in
-- the same step.
--
-- KEYS[1]  bids HASH       sett:<i>:claim:<id>:bids
-- KEYS[2]  claim HASH      sett:<i>:claim:<id>
-- KEYS[3]  events STREAM   sett:<i>:events
-- KEYS[4]  orchestrator queue STREAM  sett:<i>:orchestrator:queue
-- KEYS[5]  agent inbox STREAM         sett:<i>:agent:<agent>:inbox
-- KEYS[6]  workflow HASH              sett:<i>:workflow:<wf> (any key without req.snapshot)
-- KEYS[7]  leader epoch STRING        sett:<i>:orchestrator:epoch
-- KEYS[8]  timers ZSET                sett:<i>:timers
-- KEYS[9]  running SET                sett:<i>:scheduler:running
-- KEYS[10] waiting ZSET               sett:<i>:scheduler:waiting
-- KEYS[11] control HASH               sett:<i>:control
-- KEYS[12] capacity HASH              sett:<i>:scheduler:capacity
-- KEYS[13] grants HASH                sett:<i>:claim:<id>:grants
-- KEYS[14] the bidding agent's grants STREAM  sett:<i>:agent:<agent>:grants
-- KEYS[15] its running ZSET                   sett:<i>:agent:<agent>:running
-- KEYS[16] its waiting ZSET                   sett:<i>:agent:<agent>:waiting
-- KEYS[17] its replicas ZSET                  sett:<i>:agent:<agent>:replicas
--
-- ARGV[1] JSON request: claim_id, agent, bid, claim_channel, and
--         optionally inbox_entry and inbox_group: the bid request being
--         answered, acknowledged whatever the outcome (every outcome
--         finishes it); snapshot (true: KEYS[6] is the claim's workflow,
--         and the bids_complete entry carries the claim, its bids and the
--         workflow status as JSON, so the orchestrator can grant without
--         reading them — its write is a compare-and-set on the claim's
--         rev, so a stale snapshot cannot apply, and the grant below
--         may happen).
--
-- Returns {'OK', how} where how is 'granted' (this bid completed
-- consensus and the script granted), 'queued' (it completed consensus and
-- the orchestrator decides; the bids_complete entry names why in
-- 'fallback') or 'waiting' (other bids are still expected), or
--   {'NOT_FOUND', 'claim'}
--   {'STALE_STATUS', status}   consensus is over (the bid came too late)
--   {'NOT_INVITED', agent}     the agent is not among the expected bidders
--   {'EXISTS', bid}            the agent already bid (the stored bid)
--
-- The grant in the bid ("round trips per hop"): the claim's
-- grant_plan field, written by the orchestrator when it created the claim
-- under its epoch, holds a grant the orchestrator already decided with
-- its own consensus rules from the bids its configuration predicts:
-- expect (agent → bid), the one agent it goes to, and what the grant
-- writes (status, the claim field naming the agent, kind, phase, the
-- agent's channel and retry attempts), with max_concurrent_claims and
-- the lease check delay. This script holds no phase rule of its own: it
-- grants only when the stored bids are exactly the expected ones, the
-- bidding agent is the planned one (a cub may write only its own agent's
-- keys, internal/acl), the plan's epoch is the stored one, the workflow
-- runs, the bid deadline has not passed, the instance is not paused, the
-- claim never waited and no max_concurrent_claims slot is contested.
-- Anything else is left to the orchestrator through the bids_complete
-- entry exactly as without a plan, so correctness never depends on this
-- path: a grant here is the step the orchestrator decided, applied while
-- the claim provably is in pending_consensus.
--
-- Crash safety: HSETNX, the bid_submitted event, the grant (status, rev,
-- grants, slots, timer, inbox messages, events) or the orchestrator's
-- queue entry, and the inbox acknowledgement happen in one atomic script,
-- so a stored bid is announced exactly once, a claim is granted at most
-- once, and the request is never redone.

-- grant_now applies the claim's planned grant, or returns why it cannot
-- (the fallback reason the orchestrator's entry carries).
local function grant_now(req, expected, bids, ts)
  if not req.snapshot then
    return 'no_workflow'
  end
  local c = redis.call('HMGET', KEYS[2], 'grant_plan', 'bid_deadline_ms', 'rev', 'priority',
    'waiting_since_ms', 'artefact_id', 'workflow_id')
  if not c[1] then
    return 'no_plan'
  end
  local plan = cjson.decode(c[1])
  local stored = redis.call('GET', KEYS[7])
  if stored == false or tonumber(stored) ~= tonumber(plan.epoch) then
    return 'epoch'
  end
  if redis.call('HGET', KEYS[6], 'status') ~= 'running' then
    return 'workflow'
  end
  if c[2] == false or ts >= tonumber(c[2]) then
    return 'deadline'
  end
  if c[5] then
    return 'waited'
  end
  local held = plan_held(plan, KEYS[11], KEYS[9], KEYS[10])
  if held then
    return held
  end
  local expect = plan.expect or {}
  for i, agent in ipairs(expected) do
    if expect[agent] ~= bids[i] then
      return 'unplanned_bids'
    end
  end
  if plan.agent ~= req.agent then
    return 'other_agent'
  end

  redis.call('HDEL', KEYS[2], 'grant_plan') -- spent
  grant_planned({claim = 2, grants = 13, running = 9, timers = 8, events = 3, workflow = 6, inbox = 14,
    agent_running = 15, agent_waiting = 16, replicas = 17, capacity = 12, control = 11}, plan,
    {id = req.claim_id, workflow_id = c[7] or '', artefact_id = c[6] or '', rev = c[3], priority = c[4]},
    ts, req.claim_channel, 'last_bid')
  return nil
end

local req = cjson.decode(ARGV[1])
ack_inbox(KEYS[5], req.inbox_group, req.inbox_entry)
local claim = redis.call('HMGET', KEYS[2], 'status', 'expected_bidders', 'workflow_id')
if claim[1] == false then
  return {'NOT_FOUND', 'claim'}
end
if claim[1] ~= 'pending_consensus' then
  return {'STALE_STATUS', claim[1]}
end
-- expected_bidders is the JSON array Go wrote (["a","b"], no spaces).
-- Each of a claim's M bids used to decode it and read every stored bid
-- back, which made a claim cost O(M²) in Redis (issue 34: with 100
-- agents, a third of a claim's scripts time). Agent names need no JSON
-- escapes ([a-z0-9_-]), so membership is a plain search for the quoted
-- name between separators, the count is the commas plus one, and the
-- bids are read back only once the bids hash has as many fields as
-- there are expected bids. A name that is not found verbatim is looked
-- for in the decoded list, as before.
local function listed(json, name)
  local pat, from = '"' .. name .. '"', 1
  while true do
    local i, j = string.find(json, pat, from, true)
    if not i then
      return false
    end
    local before, after = string.sub(json, i - 1, i - 1), string.sub(json, j + 1, j + 1)
    if (before == '[' or before == ',') and (after == ']' or after == ',') then
      return true
    end
    from = j + 1
  end
end
local invited = false
if claim[2] then
  invited = listed(claim[2], req.agent)
  if not invited then
    for _, a in ipairs(cjson.decode(claim[2])) do
      if a == req.agent then
        invited = true
        break
      end
    end
  end
end
if not invited then
  return {'NOT_INVITED', req.agent}
end
if redis.call('HSETNX', KEYS[1], req.agent, req.bid) == 0 then
  return {'EXISTS', redis.call('HGET', KEYS[1], req.agent)}
end
local ts = now_ms()
emit(KEYS[3], req.claim_channel, 'bid_submitted', ts, {
  'claim_id', req.claim_id,
  'workflow_id', claim[3] or '',
  'agent', req.agent,
  'bid', req.bid,
})
-- Only the last expected bid can move consensus on: the orchestrator is
-- woken once per claim, not once per bid (the bid deadline covers the
-- agents that never answer).
-- (Bids recorded at creation for agents that were not asked do not count.)
local _, commas = string.gsub(claim[2], ',', ',')
if redis.call('HLEN', KEYS[1]) < commas + 1 then
  -- Fewer bids stored than expected: some expected bid is missing.
  return {'OK', 'waiting'}
end
local expected = cjson.decode(claim[2])
local bids = {req.bid}
if #expected ~= 1 or expected[1] ~= req.agent then
  -- (A single expected bidder is this agent, whose bid was just stored.)
  bids = redis.call('HMGET', KEYS[1], unpack(expected))
  for _, v in ipairs(bids) do
    if not v then
      return {'OK', 'waiting'}
    end
  end
end
local fallback = grant_now(req, expected, bids, ts)
if fallback == nil then
  return {'OK', 'granted'}
end
local fields = {'claim_id', req.claim_id, 'workflow_id', claim[3] or '', 'ts', tostring(ts), 'fallback', fallback}
if req.snapshot then
  local function as_map(flat)
    local m = {}
    for i = 1, #flat, 2 do
      m[flat[i]] = flat[i + 1]
    end
    return m
  end
  fields[#fields + 1] = 'snapshot'
  fields[#fields + 1] = cjson.encode({
    claim = as_map(redis.call('HGETALL', KEYS[2])),
    bids = as_map(redis.call('HGETALL', KEYS[1])),
    workflow_status = redis.call('HGET', KEYS[6], 'status') or '',
  })
end
enqueue(KEYS[4], 'bids_complete', fields)
return {'OK', 'queued'}
