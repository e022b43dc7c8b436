-- lib.lua: helpers shared by every Sett script. The Go loader prepends this
-- file to each script before SCRIPT LOAD, so a script is still one atomic
-- unit on the server. Nothing here touches a key that was not passed in
-- KEYS[] by the calling script.

-- now_ms returns the Redis server clock in milliseconds. Using the server
-- clock (not a client's) keeps timestamps and timer deadlines comparable
-- across hosts.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- epoch_refusal is the reply refusing an orchestrator write, or nil when
-- it may proceed. Fencing is not opt-in: a write without its leader epoch
-- is refused ({'NO_EPOCH'}), and one whose epoch is not the stored one —
-- a newer leader took over — is fenced ({'FENCED', stored}). With
-- operator set, the epoch -1 marks a human's override (sett cancel),
-- which no leader fences.
local function epoch_refusal(epoch_key, epoch, operator)
  local n = nil
  if epoch ~= nil and epoch ~= cjson.null then
    n = tonumber(epoch)
  end
  if n == nil or n == 0 or (n < 0 and not (operator and n == -1)) then
    return {'NO_EPOCH', 'an orchestrator write must carry its leader epoch'}
  end
  if n == -1 then
    return nil
  end
  local cur = redis.call('GET', epoch_key)
  if cur ~= false and tonumber(cur) ~= n then
    return {'FENCED', cur}
  end
  return nil
end

-- fenced reports whether a leader epoch given by the caller is older than
-- the stored one. An empty epoch means "not an orchestrator write" (only
-- for scripts that others call too: create_artefact).
local function fenced(epoch_key, epoch)
  if epoch == nil or epoch == '' or epoch == cjson.null then
    return false
  end
  local cur = redis.call('GET', epoch_key)
  return cur ~= false and tonumber(cur) ~= tonumber(epoch)
end

-- emit appends one event to the stream and publishes it as JSON on its
-- channel. fields is a flat list k1, v1, k2, v2 ...; the event name comes
-- first and the server time second so that redis-cli XRANGE reads well.
local function emit(stream, channel, name, ts, fields)
  local args = {'XADD', stream, '*', 'event', name, 'ts', tostring(ts)}
  local doc = {event = name, ts = ts}
  for i = 1, #fields, 2 do
    local v = fields[i + 1]
    if v ~= nil and v ~= '' and v ~= cjson.null then
      args[#args + 1] = fields[i]
      args[#args + 1] = tostring(v)
      doc[fields[i]] = tostring(v)
    end
  end
  local id = redis.call(unpack(args))
  if channel ~= nil and channel ~= '' then
    doc.id = id
    redis.call('PUBLISH', channel, cjson.encode(doc))
  end
  return id
end

-- emit_all appends events supplied by the caller: a list of
-- {channel = ..., name = ..., fields = {k, v, ...}}.
local function emit_all(stream, ts, events)
  if events == nil or events == cjson.null then
    return
  end
  for _, e in ipairs(events) do
    emit(stream, e.channel, e.name, ts, e.fields or {})
  end
end

-- Scheduling. A grant message may carry a gate naming, by KEYS
-- index, its agent's running ZSET (claim → delivered at, ms), waiting
-- ZSET, replicas ZSET and inbox, and the instance's capacity and control
-- HASHes and timers ZSET. The agent's capacity is
-- its max_concurrent times its live replicas (at least one); a grant
-- beyond it waits in the waiting ZSET, ordered by the claim's priority
-- and its workflow's age, until a slot frees (refill).

-- wait_member orders equal scores by workflow age, then claim id.
local function wait_member(age, rest)
  return string.format('%013d', tonumber(age or 0) or 0) .. ':' .. rest
end

-- agent_limit returns the agent's max_concurrent (0: no limit) and how
-- long a replica counts as live, in one read of the capacity HASH.
local function agent_limit(g)
  local v = redis.call('HMGET', KEYS[g.capacity], g.agent, '_replica_ttl_ms')
  return tonumber(v[1] or '0') or 0, tonumber(v[2] or '10000') or 10000
end

-- agent_full reports whether the agent holding n grants is at its
-- capacity: limit (> 0) times its live replicas (at least one). Below
-- limit it has room whatever the replicas, so they are only counted when
-- n reaches it (issue 34: a grant and a result used to count them every
-- time).
local function agent_full(g, ts, limit, ttl, n)
  if n < limit then
    return false
  end
  local live = redis.call('ZCOUNT', KEYS[g.replicas], ts - ttl, '+inf')
  if live < 1 then
    live = 1
  end
  return n >= limit * live
end

-- field_of returns the value of name in a flat k1, v1, ... list.
local function field_of(fields, name)
  for i = 1, #fields, 2 do
    if fields[i] == name then
      return tostring(fields[i + 1])
    end
  end
  return ''
end

-- push_inbox appends one message (flat fields) to an inbox stream and
-- publishes it on channel.
local function push_inbox(key, channel, fields, ts)
  local args = {'XADD', key, '*'}
  for i = 1, #fields, 2 do
    args[#args + 1] = fields[i]
    args[#args + 1] = tostring(fields[i + 1])
  end
  local id = redis.call(unpack(args))
  if channel ~= nil and channel ~= '' and channel ~= cjson.null then
    local doc = {id = id, ts = ts}
    for i = 1, #fields, 2 do
      doc[fields[i]] = tostring(fields[i + 1])
    end
    redis.call('PUBLISH', channel, cjson.encode(doc))
  end
end

-- refill hands the agent's waiting grants to its inbox while it has free
-- slots and the instance is not paused. With no grant waiting (the usual
-- case: a result or a release frees a slot nobody waits for) it reads
-- nothing else.
local function refill(g, ts)
  local top = redis.call('ZRANGE', KEYS[g.waiting], 0, 0)
  if #top == 0 or redis.call('HEXISTS', KEYS[g.control], 'paused') == 1 then
    return
  end
  local limit, ttl = agent_limit(g)
  local running = KEYS[g.running]
  local check = nil
  while #top > 0 do
    if limit > 0 and agent_full(g, ts, limit, ttl, redis.call('ZCARD', running)) then
      return
    end
    redis.call('ZREM', KEYS[g.waiting], top[1])
    local sep = string.find(top[1], ':', 1, true)
    local m = cjson.decode(string.sub(top[1], sep + 1))
    local claim = field_of(m.fields, 'claim_id')
    redis.call('ZADD', running, ts, claim)
    -- The lease check of a grant counts from its delivery, not from the
    -- grant: make sure the claim's timer looks at it in time.
    if check == nil then
      check = tonumber(redis.call('HGET', KEYS[g.capacity], '_lease_check_ms') or '0') or 0
    end
    if check > 0 then
      redis.call('ZADD', KEYS[g.timers], 'LT', ts + check, claim)
    end
    push_inbox(KEYS[g.inbox], m.channel, m.fields, ts)
    top = redis.call('ZRANGE', KEYS[g.waiting], 0, 0)
  end
end

-- release_agent frees the slot the agent held for claim and refills it.
local function release_agent(g, claim, ts)
  if redis.call('ZREM', KEYS[g.running], claim) == 1 then
    refill(g, ts)
  end
end

-- deliver appends caller-built messages to agent inbox streams; each message
-- names its stream by index into KEYS, so no key is ever built here. A
-- gated grant beyond its agent's capacity (or while the instance is
-- paused) waits instead, scored by score (minus the claim's priority) and
-- age (its workflow's start, read from the workflow HASH wf_key only
-- then). A grant for a claim the agent already holds a slot for (a
-- re-grant after a lost lease) always goes through.
local function deliver(inbox, ts, score, wf_key)
  if inbox == nil or inbox == cjson.null then
    return
  end
  for _, m in ipairs(inbox) do
    local g = m.gate
    local go = true
    if g ~= nil and g ~= cjson.null then
      local claim = field_of(m.fields, 'claim_id')
      local running = KEYS[g.running]
      if redis.call('ZSCORE', running, claim) == false then
        local wait = redis.call('HEXISTS', KEYS[g.control], 'paused') == 1
        if not wait then
          local limit, ttl = agent_limit(g)
          -- Behind the agent's capacity, or behind grants already
          -- waiting for it.
          wait = limit > 0 and (redis.call('ZCARD', KEYS[g.waiting]) > 0 or
            agent_full(g, ts, limit, ttl, redis.call('ZCARD', running)))
        end
        if wait then
          -- Wait in priority order.
          go = false
          redis.call('ZADD', KEYS[g.waiting], tonumber(score or 0) or 0,
            wait_member(redis.call('HGET', wf_key, 'started_at_ms'),
              cjson.encode({fields = m.fields, channel = m.channel})))
          refill(g, ts)
        else
          redis.call('ZADD', running, ts, claim)
        end
      else
        -- A re-grant on a held slot: its lease check counts from now.
        redis.call('ZADD', running, ts, claim)
      end
    end
    if go then
      push_inbox(KEYS[m.key], m.channel, m.fields, ts)
    end
  end
end

-- enqueue appends an entry for the orchestrator to act on (its queue
-- stream); fields is a flat list k1, v1, ...
local function enqueue(queue, name, fields)
  local args = {'XADD', queue, '*', 'event', name}
  for i = 1, #fields, 2 do
    local v = fields[i + 1]
    if v ~= nil and v ~= '' and v ~= cjson.null then
      args[#args + 1] = fields[i]
      args[#args + 1] = tostring(v)
    end
  end
  redis.call(unpack(args))
end

-- finish_workflow moves a workflow the caller has just seen running (in
-- the same script) to a final status and announces it. Every end is also
-- queued for the orchestrator, which counts it (workflows_ended_total,
-- completed ones included) and, for a workflow that failed or was
-- cancelled, ends its open claims; a nil queue leaves that to the caller
-- (it counts the end itself).
local function finish_workflow(wf_key, stream, channel, wf_id, status, reason, ts, queue)
  redis.call('HSET', wf_key, 'status', status, 'ended_at_ms', tostring(ts), 'outcome', reason)
  emit(stream, channel, 'workflow_completed', ts,
    {'workflow_id', wf_id, 'status', status, 'reason', reason})
  if queue ~= nil then
    enqueue(queue, 'workflow_completed', {'workflow_id', wf_id, 'status', status, 'ts', tostring(ts)})
  end
end

-- end_workflow is finish_workflow for a workflow that may have ended
-- already: it ends it once. Returns true when this call ended it.
local function end_workflow(wf_key, stream, channel, wf_id, status, reason, ts, queue)
  if redis.call('HGET', wf_key, 'status') ~= 'running' then
    return false
  end
  finish_workflow(wf_key, stream, channel, wf_id, status, reason, ts, queue)
  return true
end

-- close_running_item decrements the open items of a workflow the caller
-- has just seen running (in the same script) and completes it when
-- nothing is left open; returns true when it did. The outcome names the
-- branches that ended by configuration (chain_ends, written by
-- transition_claim), so a completion never hides them.
local function close_running_item(wf_key, stream, channel, wf_id, ts, queue)
  local open = redis.call('HINCRBY', wf_key, 'open_items', -1)
  if open > 0 then
    return false
  end
  local outcome = 'all work complete'
  local ends = redis.call('HGET', wf_key, 'chain_ends')
  if ends then
    outcome = outcome .. '; chain ends by configuration: ' .. ends
  end
  finish_workflow(wf_key, stream, channel, wf_id, 'completed', outcome, ts, queue)
  return true
end

-- close_item is close_running_item for a workflow that may have ended
-- already (then it does nothing and returns false).
local function close_item(wf_key, stream, channel, wf_id, ts, queue)
  if redis.call('HGET', wf_key, 'status') ~= 'running' then
    return false
  end
  return close_running_item(wf_key, stream, channel, wf_id, ts, queue)
end

-- unschedule takes a claim that reached a final status out of the
-- scheduler and the orchestrator's sight: the active index, the timers,
-- the waiting claims (member: its wait_member) and the running set, and
-- drops the claim's waiting fields and its spent finish plan. A slot freed
-- while claims wait for one wakes the orchestrator (capacity_freed).
-- k names, by KEYS index: claim, active, timers, waiting, running, queue.
local function unschedule(k, claim_id, member, ts)
  redis.call('ZREM', KEYS[k.active], claim_id)
  redis.call('ZREM', KEYS[k.timers], claim_id)
  redis.call('ZREM', KEYS[k.waiting], member)
  redis.call('HDEL', KEYS[k.claim], 'waiting_since_ms', 'waiting_reason', 'finish_plan')
  if redis.call('SREM', KEYS[k.running], claim_id) == 1 and redis.call('ZCARD', KEYS[k.waiting]) > 0 then
    enqueue(KEYS[k.queue], 'capacity_freed', {'claim_id', claim_id, 'ts', tostring(ts)})
  end
end

-- ack_inbox acknowledges and deletes an agent's handled inbox entry in the
-- same step as its effect, so a cub never redoes finished work and never
-- needs a round trip of its own for the acknowledgement.
local function ack_inbox(inbox, group, entry)
  if entry == nil or entry == '' or entry == cjson.null then
    return
  end
  redis.call('XACK', inbox, group, entry)
  redis.call('XDEL', inbox, entry)
end

-- may reports whether the caller's Redis user holds the privilege named
-- cap; refuse_unless is an error reply when it does not, else nil. A privilege is write access (SET) to the
-- key <prefix>privilege:<cap>, which nothing ever writes: the instance's
-- ACL users (internal/acl) grant it to the roles that may do what the
-- script does, so a cub's user cannot run a script that ends a workflow,
-- leads, decides an approval or trims the event log, even with keys its
-- user may write. The prefix is read from key, one of the script's KEYS
-- (every one carries it). The default user, and any user of an instance
-- without ACL users, may write every key and so holds every privilege.
-- Redis before 7.0 has no redis.acl_check_cmd: there the ACL's key
-- patterns alone guard.
local function may(key, cap)
  if redis.acl_check_cmd == nil then
    return true
  end
  local prefix = string.match(key, '^sett:{[^}]*}:') or string.match(key, '^sett:[^:]*:')
  return prefix ~= nil and redis.acl_check_cmd('SET', prefix .. 'privilege:' .. cap, '1')
end

local function refuse_unless(key, cap)
  if may(key, cap) then
    return nil
  end
  return redis.error_reply('NOPERM this Redis user lacks the Sett privilege ' .. cap .. ' (see docs/security.md)')
end

-- plan_held is why a claim's planned grant (grant_plan.go) must be left
-- to the orchestrator's scheduler, or nil: the instance is paused, or
-- orchestrator.max_concurrent_claims (the plan's limit) leaves no free
-- slot or other claims already wait for one (the orchestrator orders
-- them). control, running and waiting are keys.
local function plan_held(plan, control, running, waiting)
  if redis.call('HEXISTS', control, 'paused') == 1 then
    return 'paused'
  end
  local limit = tonumber(plan.limit or 0) or 0
  if limit > 0 and (redis.call('SCARD', running) >= limit or redis.call('ZCARD', waiting) > 0) then
    return 'capacity'
  end
  return nil
end

-- grant_planned writes a claim's planned grant, decided by the
-- orchestrator under its epoch, for a claim the caller has just seen in
-- pending_consensus with every bid the plan expects: the status, rev,
-- attempt and the field naming the agent, the grant token, the scheduler
-- slot, the lease check timer, the claim_transitioned and claim_granted
-- events, and the grant message through the agent's gate (it may wait
-- for one of the agent's slots).
-- k names, by KEYS index: claim, grants, running, timers, events,
-- workflow, and the agent's inbox (its grants stream), agent_running,
-- agent_waiting, replicas, capacity, control. c holds the claim's id,
-- workflow_id, artefact_id, rev and priority as read; channel is where
-- claim events are published; by says who granted (granted_by).
local function grant_planned(k, plan, c, ts, channel, by)
  local rev = (tonumber(c.rev or '0') or 0) + 1
  redis.call('HSET', KEYS[k.claim], 'status', plan.status, 'rev', tostring(rev), 'updated_at_ms', tostring(ts),
    'attempts', '1', plan.field, plan.named)
  redis.call('HSET', KEYS[k.grants], plan.agent, '1')
  redis.call('SADD', KEYS[k.running], c.id)
  redis.call('ZADD', KEYS[k.timers], ts + (tonumber(plan.timer_ms or 0) or 0), c.id)
  emit(KEYS[k.events], channel, 'claim_transitioned', ts, {
    'claim_id', c.id, 'workflow_id', c.workflow_id, 'from', 'pending_consensus', 'to', plan.status})
  emit(KEYS[k.events], channel, 'claim_granted', ts, {
    'workflow_id', c.workflow_id, 'claim_id', c.id, 'artefact_id', c.artefact_id,
    'agents', plan.agent, 'granted_by', by, 'phase', plan.phase})
  deliver({{
    key = k.inbox,
    channel = plan.channel,
    fields = {'kind', 'grant', 'claim_id', c.id, 'artefact_id', c.artefact_id, 'workflow_id', c.workflow_id,
      'grant', plan.grant, 'token', '1', 'attempt', '1', 'max_attempts', plan.max_attempts},
    gate = {agent = plan.agent, inbox = k.inbox, running = k.agent_running, waiting = k.agent_waiting,
      replicas = k.replicas, capacity = k.capacity, control = k.control, timers = k.timers},
  }}, ts, -(tonumber(c.priority or '0') or 0), KEYS[k.workflow])
end
