-- transition_claim: compare-and-set a claim from one status to the next,
-- with every side effect of that step.
--
-- KEYS[1]  claim HASH          sett:<i>:claim:<id>
-- KEYS[2]  active claims ZSET  sett:<i>:index:claims:active
-- KEYS[3]  events STREAM       sett:<i>:events
-- KEYS[4]  workflow HASH       sett:<i>:workflow:<wf>
-- KEYS[5]  timers ZSET         sett:<i>:timers
-- KEYS[6]  leader epoch STRING sett:<i>:orchestrator:epoch
-- KEYS[7]  bids HASH           sett:<i>:claim:<id>:bids
-- KEYS[8]  grants HASH         sett:<i>:claim:<id>:grants
-- KEYS[9]  orchestrator queue STREAM sett:<i>:orchestrator:queue
-- KEYS[10] approvals index ZSET sett:<i>:index:approvals
-- KEYS[11] outputs HASH        sett:<i>:claim:<id>:outputs
-- KEYS[12] failures SET        sett:<i>:claim:<id>:failures
-- KEYS[13] running SET         sett:<i>:scheduler:running
-- KEYS[14] waiting ZSET        sett:<i>:scheduler:waiting
-- KEYS[15] control HASH        sett:<i>:control
-- KEYS[16] capacity HASH       sett:<i>:scheduler:capacity
-- KEYS[17..] agent keys (inboxes, running sets, waiting sets, replicas,
--            leases) referenced by index from ARGV[1]
--
-- ARGV[1] JSON request:
--   id, workflow_id, epoch,
--   from             the status the caller saw (compare)
--   rev              the rev the caller saw (compare; -1 skips)
--   to               the new status
--   set              flat list of claim fields to set
--   bids             flat list agent, bid, ... recorded where the agent has
--                    no bid yet (HSETNX): 'ignore' for agents that did not
--                    bid in time, and bids decided without asking (an
--                    approved claim's consensus starting)
--   grants           flat list agent, token
--   clear_outputs    agents whose output and failure mark are removed (a
--                    retry: the agent delivers again under a new token)
--   inbox            list of {key, channel, fields, gate} (see lib.lua)
--   global           present when the step grants work: {limit (0 = none),
--                    check (false: exempt from the limit), counts (false:
--                    not counted)}; while paused, or when the claim is not
--                    yet counted and the limit is reached (or better
--                    ranked claims wait for the free slots), the step is
--                    not applied: the claim waits in KEYS[14]
--   release          on a final status, the agents whose slots, leases and
--                    waiting grants go: list of {gate, lease, channel}
--   timer_in_ms      >=0: (re)arm the claim's timer at now+timer_in_ms;
--                    absent: leave it; final statuses always clear it
--   bid_timeout_ms   >0: consensus starts now: bid_deadline_ms = now +
--                    bid_timeout_ms and the timer is armed at it
--   chain_end        non-empty: a note appended to the workflow's
--                    chain_ends (a branch that ended by configuration),
--                    listed in the outcome when the workflow completes
--   close_item       true: the claim ends and its open item closes
--   fail_workflow    true: end the workflow with workflow_status (default
--                    'failed') and fail_reason
--   events           list of {channel, name, fields}
--   queue            list of {name, fields}: entries for the orchestrator's
--                    queue (work that must follow this step at least once)
--   claim_channel, workflow_channel
--   count_end        true: a workflow this step completes (close_item) is
--                    not queued as workflow_completed; the caller counts
--                    it from the reply (a completed workflow needs nothing
--                    else from the orchestrator)
--
-- Returns {'OK', new_rev, now_ms, waited_ms, ended} (ended '1' when this
-- step completed the workflow through close_item, else '0') or
--   {'FENCED', stored_epoch} or {'NO_EPOCH', why}
--   {'NOT_FOUND', 'claim'}
--   {'STALE_STATUS', status, rev}   another handler already moved the claim
--   {'WAITING', reason}             'capacity' or 'paused': the transition
--                                   is not applied; the claim is queued in
--                                   the waiting ZSET and records
--                                   waiting_since_ms / waiting_reason (with
--                                   a claim_waiting event the first time),
--                                   and waits for a slot or a resume
--
-- Crash safety and idempotency: the compare on status and rev makes a
-- retried or duplicated step fail with STALE_STATUS instead of applying
-- twice, and the script's atomicity means a claim never changes status
-- without its grants, inbox messages, timer, slots, workflow counters and
-- events.

local req = cjson.decode(ARGV[1])

local refusal = epoch_refusal(KEYS[6], req.epoch)
if refusal then
  return refusal
end
local cur = redis.call('HMGET', KEYS[1], 'status', 'rev', 'priority', 'waiting_since_ms')
if cur[1] == false then
  return {'NOT_FOUND', 'claim'}
end
local rev = tonumber(cur[2] or '0')
if cur[1] ~= req.from or (tonumber(req.rev or -1) >= 0 and rev ~= tonumber(req.rev)) then
  return {'STALE_STATUS', cur[1], tostring(rev)}
end

local ts = now_ms()
local prio = tonumber(cur[3] or '0') or 0
local member = wait_member(redis.call('HGET', KEYS[4], 'started_at_ms'), req.id)
local waited = 0

local gate = req.global
if gate ~= nil and gate ~= cjson.null then
  local reason = nil
  local held = redis.call('SISMEMBER', KEYS[13], req.id) == 1
  local limit = tonumber(gate.limit or 0) or 0
  if redis.call('HEXISTS', KEYS[15], 'paused') == 1 then
    reason = 'paused'
  elseif gate.check and not held and limit > 0 then
    local free = limit - redis.call('SCARD', KEYS[13])
    if free <= 0 then
      reason = 'capacity'
    else
      -- Strict order: only the best-ranked waiting claims take the free
      -- slots, whoever happens to be advanced first.
      redis.call('ZADD', KEYS[14], -prio, member)
      if redis.call('ZRANK', KEYS[14], member) >= free then
        reason = 'capacity'
      end
    end
  end
  if reason then
    redis.call('ZADD', KEYS[14], -prio, member)
    if redis.call('HSETNX', KEYS[1], 'waiting_since_ms', tostring(ts)) == 1 then
      emit(KEYS[3], req.claim_channel, 'claim_waiting', ts, {
        'claim_id', req.id, 'workflow_id', req.workflow_id, 'reason', reason, 'priority', tostring(prio)})
    end
    redis.call('HSET', KEYS[1], 'waiting_reason', reason)
    return {'WAITING', reason}
  end
  redis.call('ZREM', KEYS[14], member)
  if cur[4] then
    waited = ts - tonumber(cur[4])
    redis.call('HDEL', KEYS[1], 'waiting_since_ms', 'waiting_reason')
  end
  if gate.counts then
    redis.call('SADD', KEYS[13], req.id)
  end
end

local hset = {'HSET', KEYS[1], 'status', req.to, 'rev', tostring(rev + 1), 'updated_at_ms', tostring(ts)}
if req.to == 'terminated' then
  -- Where it ended, so that `sett retry` can put it back (retry_claim).
  hset[#hset + 1] = 'terminated_from'
  hset[#hset + 1] = req.from
end
if req.set ~= nil and req.set ~= cjson.null then
  for _, v in ipairs(req.set) do
    hset[#hset + 1] = v
  end
end
redis.call(unpack(hset))
if req.from == 'pending_consensus' and req.to ~= 'pending_consensus' then
  -- Consensus is over: the bid script's grant plan (submit_bid) is spent.
  redis.call('HDEL', KEYS[1], 'grant_plan')
end

if req.bids ~= nil and req.bids ~= cjson.null then
  for i = 1, #req.bids, 2 do
    redis.call('HSETNX', KEYS[7], req.bids[i], req.bids[i + 1])
  end
end
if req.clear_outputs ~= nil and req.clear_outputs ~= cjson.null then
  for _, agent in ipairs(req.clear_outputs) do
    redis.call('HDEL', KEYS[11], agent)
    redis.call('SREM', KEYS[12], agent)
  end
end
if req.grants ~= nil and req.grants ~= cjson.null and #req.grants > 0 then
  local g = {'HSET', KEYS[8]}
  for _, v in ipairs(req.grants) do
    g[#g + 1] = v
  end
  redis.call(unpack(g))
end

local final = req.to == 'complete' or req.to == 'terminated'
if req.from == 'pending_approval' and req.to ~= 'pending_approval' then
  redis.call('ZREM', KEYS[10], req.id)
end
local bid_timeout = tonumber(req.bid_timeout_ms or 0)
if final then
  unschedule({claim = 1, active = 2, timers = 5, waiting = 14, running = 13, queue = 9}, req.id, member, ts)
end
if req.release ~= nil and req.release ~= cjson.null then
  for _, r in ipairs(req.release) do
    -- The grant is over (the claim's end, or a grant withdrawn while the
    -- claim goes on: an advisory reviewer past its deadline): its slot
    -- frees for the agent's next waiting grant, and the lease goes so
    -- that a tool still running stops (its cub sees the lease lost; the
    -- doorbell makes it look now).
    release_agent(r.gate, req.id, ts)
    if redis.call('DEL', KEYS[r.lease]) == 1 and r.channel ~= nil and r.channel ~= cjson.null then
      redis.call('PUBLISH', r.channel, cjson.encode({kind = 'withdrawn', claim_id = req.id, ts = ts}))
    end
  end
end
if final then
  -- done above
elseif bid_timeout > 0 then
  redis.call('HSET', KEYS[1], 'bid_deadline_ms', tostring(ts + bid_timeout))
  redis.call('ZADD', KEYS[5], ts + bid_timeout, req.id)
elseif req.timer_in_ms ~= nil and req.timer_in_ms ~= cjson.null and tonumber(req.timer_in_ms) >= 0 then
  redis.call('ZADD', KEYS[5], ts + tonumber(req.timer_in_ms), req.id)
end

emit(KEYS[3], req.claim_channel, 'claim_transitioned', ts, {
  'claim_id', req.id,
  'workflow_id', req.workflow_id,
  'from', req.from,
  'to', req.to,
})
emit_all(KEYS[3], ts, req.events)
if req.queue ~= nil and req.queue ~= cjson.null then
  for _, q in ipairs(req.queue) do
    local f = q.fields or {}
    f[#f + 1] = 'ts'
    f[#f + 1] = tostring(ts)
    enqueue(KEYS[9], q.name, f)
  end
end
deliver(req.inbox, ts, -prio, KEYS[4])

if req.fail_workflow then
  local status = req.workflow_status
  if status == nil or status == cjson.null or status == '' then
    status = 'failed'
  end
  end_workflow(KEYS[4], KEYS[3], req.workflow_channel, req.workflow_id, status, req.fail_reason or status, ts, KEYS[9])
end
if req.chain_end ~= nil and req.chain_end ~= cjson.null and req.chain_end ~= '' and
    redis.call('HGET', KEYS[4], 'status') == 'running' then
  local ends = redis.call('HGET', KEYS[4], 'chain_ends')
  if ends then
    ends = ends .. '; ' .. req.chain_end
  else
    ends = req.chain_end
  end
  redis.call('HSET', KEYS[4], 'chain_ends', ends)
end
local ended = false
if final and req.close_item then
  local queue = KEYS[9]
  if req.count_end then
    queue = nil
  end
  ended = close_item(KEYS[4], KEYS[3], req.workflow_channel, req.workflow_id, ts, queue)
end

local ended_flag = '0'
if ended then
  ended_flag = '1'
end
return {'OK', tostring(rev + 1), tostring(ts), tostring(waited), ended_flag}
