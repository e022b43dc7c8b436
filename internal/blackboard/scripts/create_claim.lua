-- create_claim: create a claim once, with its bid requests (or, for a
-- feedback claim, its direct grant), timer and indexes.
--
-- KEYS[1]  claim HASH                sett:<i>:claim:<id>
-- KEYS[2]  claim_by_artefact STRING  sett:<i>:claim_by_artefact:<artefact> (any key when by_artefact is false)
-- KEYS[3]  active claims ZSET        sett:<i>:index:claims:active
-- KEYS[4]  workflow claims ZSET      sett:<i>:index:workflow:<wf>:claims
-- KEYS[5]  claim id index ZSET       sett:<i>:index:claim_ids
-- KEYS[6]  events STREAM             sett:<i>:events
-- KEYS[7]  workflow HASH             sett:<i>:workflow:<wf>
-- KEYS[8]  timers ZSET               sett:<i>:timers
-- KEYS[9]  leader epoch STRING       sett:<i>:orchestrator:epoch
-- KEYS[10] grants HASH               sett:<i>:claim:<id>:grants
-- KEYS[11] bids HASH                 sett:<i>:claim:<id>:bids
-- KEYS[12] approvals index ZSET      sett:<i>:index:approvals
-- KEYS[13] running SET               sett:<i>:scheduler:running
-- KEYS[14..] agent keys (inboxes and their gates' keys) referenced by
--           index from ARGV[1].inbox; with grant_now (which sends no inbox
--           message) the planned agent's keys instead:
--   KEYS[14] waiting ZSET                       sett:<i>:scheduler:waiting
--   KEYS[15] control HASH                       sett:<i>:control
--   KEYS[16] capacity HASH                      sett:<i>:scheduler:capacity
--   KEYS[17] the planned agent's grants STREAM  sett:<i>:agent:<agent>:grants
--   KEYS[18] its running ZSET                   sett:<i>:agent:<agent>:running
--   KEYS[19] its waiting ZSET                   sett:<i>:agent:<agent>:waiting
--   KEYS[20] its replicas ZSET                  sett:<i>:agent:<agent>:replicas
--
-- ARGV[1] JSON request:
--   id, artefact_id, workflow_id, status, epoch,
--   by_artefact      true: the claim is the artefact's regular claim (idempotent per artefact)
--   adds_item        true: the claim is new open work (a feedback claim);
--                    false: it takes over the open item its artefact already holds
--   bid_timeout_ms   >0: set bid_deadline_ms and a timer at now+bid_timeout_ms
--   timer_in_ms      >0: a timer at now+timer_in_ms (used when no bid timeout)
--   approval_timeout_ms  with status pending_approval: the approval is
--                    requested now and expires at now+approval_timeout_ms
--                    (0: never); the claim joins the approvals index and
--                    its timer is armed at the expiry
--   max_artefacts, max_depth, depth, max_tokens   budgets (0 = unlimited)
--   grants           flat list agent, token, ...
--   counts           true: the claim holds a scheduler slot from now on (a
--                    feedback claim continuing its parent's work; exempt
--                    from max_concurrent_claims, which its parent held)
--   bids             flat list agent, bid, ... decided without asking the
--                    agent (its rules already say ignore)
--   inbox            list of {key = KEYS index, channel, fields = {k, v, ...},
--                    gate} (a gated grant may wait for its agent's slot)
--   events           list of {channel, name, fields}
--   claim_channel, workflow_channel
--   grant_now        a grant plan (grant_plan.go) to apply at creation,
--                    never stored with the claim; see "The grant at
--                    creation" below
-- ARGV[2..] claim hash field/value pairs (the script adds created_at_ms,
--   updated_at_ms, priority and bid_deadline_ms).
--
-- Returns {'OK', id, created_at_ms, granted} — granted is 'granted' when
-- the planned grant was applied, else '' (no grant_now) or why it was
-- held for the orchestrator ('paused', 'capacity') — or
--   {'EXISTS', existing_claim_id}       already created (idempotent repeat)
--   {'FENCED', stored_epoch} or {'NO_EPOCH', why}
--   {'NOT_FOUND', 'workflow'}
--   {'WORKFLOW_ENDED', status}          the workflow is no longer running
--   {'BUDGET_EXCEEDED', which, limit}   'artefacts', 'depth' or 'tokens'
--
-- Crash safety: all checks precede all writes and the script is atomic, so
-- either the claim, its artefact mapping, indexes, timer, bid requests and
-- claim_created event all exist, or none do; a retry after a crash finds
-- the mapping and returns EXISTS instead of creating a second claim.
--
-- The grant at creation (issue 34): when the orchestrator asks nobody to
-- bid, because the agents' rules decide every bid it records with the
-- claim, it has already decided the grant those bids lead to with its
-- consensus rules, and sends it as grant_now. The claim is then provably in pending_consensus with
-- exactly the bids the decision was made from (this script wrote both),
-- under the epoch checked above, in a running workflow, before any
-- deadline, so the grant is written here as the last bid's script
-- writes it (grant_planned in lib.lua) instead of in a second script
-- after a second read. Only what needs the scheduler's judgement holds
-- it back (plan_held: paused, a contested max_concurrent_claims slot);
-- then the claim stays in pending_consensus and the orchestrator
-- decides as without a plan.

local req = cjson.decode(ARGV[1])

local refusal = epoch_refusal(KEYS[9], req.epoch)
if refusal then
  return refusal
end
if req.by_artefact then
  local existing = redis.call('GET', KEYS[2])
  if existing then
    return {'EXISTS', existing}
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'EXISTS', req.id}
end

local wf = redis.call('HMGET', KEYS[7], 'status', 'artefact_count', 'priority')
if wf[1] == false then
  return {'NOT_FOUND', 'workflow'}
end
if wf[1] ~= 'running' then
  return {'WORKFLOW_ENDED', wf[1]}
end
local max_artefacts = tonumber(req.max_artefacts or 0)
if max_artefacts > 0 and tonumber(wf[2] or '0') > max_artefacts then
  return {'BUDGET_EXCEEDED', 'artefacts', tostring(max_artefacts)}
end
local max_tokens = tonumber(req.max_tokens or 0) or 0
if max_tokens > 0 and (tonumber(redis.call('HGET', KEYS[7], 'tokens') or '0') or 0) > max_tokens then
  return {'BUDGET_EXCEEDED', 'tokens', tostring(max_tokens)}
end
local max_depth = tonumber(req.max_depth or 0)
if max_depth > 0 and tonumber(req.depth or 0) > max_depth then
  return {'BUDGET_EXCEEDED', 'depth', tostring(max_depth)}
end

local ts = now_ms()
local hset = {'HSET', KEYS[1]}
for i = 2, #ARGV, 2 do
  hset[#hset + 1] = ARGV[i]
  hset[#hset + 1] = ARGV[i + 1]
end
hset[#hset + 1] = 'created_at_ms'
hset[#hset + 1] = tostring(ts)
hset[#hset + 1] = 'updated_at_ms'
hset[#hset + 1] = tostring(ts)
hset[#hset + 1] = 'priority'
hset[#hset + 1] = wf[3] or '0'
local bid_timeout = tonumber(req.bid_timeout_ms or 0)
local due = 0
if bid_timeout > 0 then
  due = ts + bid_timeout
  hset[#hset + 1] = 'bid_deadline_ms'
  hset[#hset + 1] = tostring(due)
elseif tonumber(req.timer_in_ms or 0) > 0 then
  due = ts + tonumber(req.timer_in_ms)
end
if req.status == 'pending_approval' then
  hset[#hset + 1] = 'approval_requested_at_ms'
  hset[#hset + 1] = tostring(ts)
  local timeout = tonumber(req.approval_timeout_ms or 0)
  if timeout > 0 then
    due = ts + timeout
    hset[#hset + 1] = 'approval_expires_at_ms'
    hset[#hset + 1] = tostring(due)
  end
  redis.call('ZADD', KEYS[12], ts, req.id)
end
redis.call(unpack(hset))

if req.by_artefact then
  redis.call('SET', KEYS[2], req.id)
end
redis.call('ZADD', KEYS[3], ts, req.id)
redis.call('ZADD', KEYS[4], ts, req.id)
redis.call('ZADD', KEYS[5], 0, req.id)
if due > 0 then
  redis.call('ZADD', KEYS[8], due, req.id)
end
if req.grants ~= nil and req.grants ~= cjson.null and #req.grants > 0 then
  local g = {'HSET', KEYS[10]}
  for _, v in ipairs(req.grants) do
    g[#g + 1] = v
  end
  redis.call(unpack(g))
end
if req.bids ~= nil and req.bids ~= cjson.null and #req.bids > 0 then
  local b = {'HSET', KEYS[11]}
  for _, v in ipairs(req.bids) do
    b[#b + 1] = v
  end
  redis.call(unpack(b))
end
if req.adds_item then
  redis.call('HINCRBY', KEYS[7], 'open_items', 1)
end
if req.counts then
  redis.call('SADD', KEYS[13], req.id)
end

emit(KEYS[6], req.claim_channel, 'claim_created', ts, {
  'claim_id', req.id,
  'artefact_id', req.artefact_id,
  'workflow_id', req.workflow_id,
  'status', req.status,
})
emit_all(KEYS[6], ts, req.events)
deliver(req.inbox, ts, -(tonumber(wf[3] or '0') or 0), KEYS[7])

local granted = ''
local plan = req.grant_now
if plan ~= nil and plan ~= cjson.null then
  granted = plan_held(plan, KEYS[15], KEYS[13], KEYS[14]) or 'granted'
  if granted == 'granted' then
    grant_planned({claim = 1, grants = 10, running = 13, timers = 8, events = 6, workflow = 7, inbox = 17,
      agent_running = 18, agent_waiting = 19, replicas = 20, capacity = 16, control = 15}, plan,
      {id = req.id, workflow_id = req.workflow_id, artefact_id = req.artefact_id, rev = '0', priority = wf[3]},
      ts, req.claim_channel, 'rules')
  end
end

return {'OK', req.id, tostring(ts), granted}
