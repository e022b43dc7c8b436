-- create_artefact: write one immutable artefact and everything that
-- announces it, all or nothing.
--
-- KEYS[1]  artefact HASH            sett:<i>:artefact:<id>
-- KEYS[2]  thread ZSET              sett:<i>:thread:<logical_id>
-- KEYS[3]  artefact time index ZSET sett:<i>:index:artefacts
-- KEYS[4]  workflow artefact ZSET   sett:<i>:index:workflow:<wf>
-- KEYS[5]  artefact id index ZSET   sett:<i>:index:artefact_ids
-- KEYS[6]  events STREAM            sett:<i>:events
-- KEYS[7]  workflow HASH            sett:<i>:workflow:<wf>
-- KEYS[8]  workflow index ZSET      sett:<i>:index:workflows
-- KEYS[9]  claim grants HASH        sett:<i>:claim:<c>:grants  (any key when not an output)
-- KEYS[10] claim outputs HASH       sett:<i>:claim:<c>:outputs (any key when not an output)
-- KEYS[11] leader epoch STRING      sett:<i>:orchestrator:epoch
-- KEYS[12] orchestrator queue STREAM sett:<i>:orchestrator:queue
-- KEYS[13] work lease STRING        sett:<i>:lease:<c>:<agent> (any key when not an output)
-- KEYS[14] agent grants STREAM      sett:<i>:agent:<agent>:grants (any key when not an output)
-- KEYS[15] claim failures SET       sett:<i>:claim:<c>:failures (any key when not an output)
-- KEYS[16] agent running ZSET       sett:<i>:agent:<agent>:running (any key when not an output)
-- KEYS[17] agent waiting ZSET       sett:<i>:agent:<agent>:waiting (any key when not an output)
-- KEYS[18] agent replicas ZSET      sett:<i>:agent:<agent>:replicas (any key when not an output)
-- KEYS[19] capacity HASH            sett:<i>:scheduler:capacity
-- KEYS[20] control HASH             sett:<i>:control
-- KEYS[21] timers ZSET              sett:<i>:timers
-- KEYS[22] workflow memories HASH   sett:<i>:workflow:<wf>:memories
-- KEYS[23] agent tokens HASH        sett:<i>:tokens:agents
-- KEYS[24] claim HASH               sett:<i>:claim:<c> (any key when not an output)
-- KEYS[25] active claims ZSET       sett:<i>:index:claims:active
-- KEYS[26] scheduler running SET    sett:<i>:scheduler:running
-- KEYS[27] scheduler waiting ZSET   sett:<i>:scheduler:waiting
--
-- ARGV[1]  JSON request: id, logical_id, version, workflow_id, claim_id,
--          structural_type, type, produced_by_role, agent (set when the
--          artefact is an agent's result for claim_id), token (the grant
--          token the agent holds), epoch (orchestrator writes), goal (true
--          when this artefact starts its workflow), claimable, priority,
--          depth, artefact_channel, workflow_channel, and for results
--          inbox_entry and inbox_group (the grant's inbox entry, acked
--          and deleted here, with the lease released and the agent's
--          slot handed to its next waiting grant); tokens and
--          token_agent: the model tokens the artefact's usage reports
--          (input plus output) and the agent they are counted for.
--          A result's queue entry also names its claim's target
--          (target_id), so the orchestrator reads the claim and the
--          phase's artefacts in one round trip. claim_channel: where a
--          claim this result completes is announced. by_agent: the
--          producing agent (recorded on the workflow for the list's
--          filter).
-- ARGV[2..] the artefact hash as field/value pairs (without created_at_ms).
--
-- Returns {'OK', created_at_ms} or one of
--   {'FENCED', stored_epoch}         a newer orchestrator leads
--   {'EXISTS', 'artefact'}           the id is taken (artefacts are write-once)
--   {'EXISTS', 'output'}             this agent already delivered this claim
--   {'VERSION_CONFLICT', latest}     version is not latest+1 (or 1 on a new thread)
--   {'NOT_FOUND', 'workflow'}        a non-goal artefact names no workflow
--   {'EXISTS', 'workflow'}           a goal whose workflow already exists
--   {'STALE_GRANT', current_token}   the agent's grant was withdrawn or re-granted
--
-- Crash safety: every check runs before the first write, and a Lua script
-- runs to completion or not at all (a server crash mid-script loses the
-- whole script with the AOF). So the hash, its thread entry, its index
-- entries, the workflow counters, the artefact_created event and the
-- orchestrator's queue entry (and, for a result, the released lease and
-- the acknowledged grant) appear together or not at all: an artefact can
-- never exist unannounced.
--
-- Completion by the result ("round trips per hop"): a result
-- that ends its claim the plain way completes the claim here, as the
-- orchestrator's phase step would, instead of queueing the result for
-- it. The claim's finish_plan field holds the leader epoch the
-- orchestrator created it under (its consent); the script completes only
-- while that epoch is the stored one, the claim is an exclusive grant
-- (pending_exclusive) of this very agent and not a learn claim, the
-- result names the claim's workflow and that workflow runs, the result
-- is no Failure and carries no memory to merge, and the agent has no
-- failure on record. Then the claim goes to complete
-- with what the orchestrator's transition writes (status, rev, reason,
-- indexes, timer, scheduler slot, claim_transitioned and claim_completed
-- events, the workflow's open item), and the orchestrator only gets a
-- claim_completed_by_result entry to count. Anything else queues the
-- result exactly as without a plan, so correctness never rests on it.

local req = cjson.decode(ARGV[1])

if fenced(KEYS[11], req.epoch) then
  return {'FENCED', redis.call('GET', KEYS[11])}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'EXISTS', 'artefact'}
end

-- Versions in a thread are contiguous: v1 opens an empty thread, vN needs
-- v(N-1) to be the latest. Two racing reworks cannot both become vN.
local version = tonumber(req.version)
local top = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local latest = 0
if #top > 0 then
  latest = tonumber(top[2])
end
if latest ~= version - 1 then
  return {'VERSION_CONFLICT', tostring(latest)}
end

if req.goal then
  if redis.call('EXISTS', KEYS[7]) == 1 then
    return {'EXISTS', 'workflow'}
  end
elseif redis.call('EXISTS', KEYS[7]) == 0 then
  return {'NOT_FOUND', 'workflow'}
end

if req.agent ~= nil and req.agent ~= '' then
  local token = redis.call('HGET', KEYS[9], req.agent)
  if token == false or token ~= req.token then
    return {'STALE_GRANT', token or ''}
  end
  if redis.call('HEXISTS', KEYS[10], req.agent) == 1 then
    return {'EXISTS', 'output'}
  end
end

-- All checks passed: write.
local ts = now_ms()
local ts_s = tostring(ts)
-- The id was checked free above, so one HSET writes every field. Cubs'
-- and people's Redis users hold HSETNX alone on artefacts, so that no
-- user but the orchestrator's can change a field once written
-- (internal/acl): for them (and on a Redis without acl_check_cmd, where
-- the ACL cannot be asked) the fields go one HSETNX each, which writes
-- the same hash.
local payload = ''
local memory = ''
for i = 2, #ARGV, 2 do
  if ARGV[i] == 'payload' then
    payload = ARGV[i + 1]
  elseif ARGV[i] == 'memory' then
    memory = ARGV[i + 1]
  end
end
if redis.acl_check_cmd ~= nil and redis.acl_check_cmd('HSET', KEYS[1], 'created_at_ms', ts_s) then
  local hset = {'HSET', KEYS[1]}
  for i = 2, #ARGV do
    hset[#hset + 1] = ARGV[i]
  end
  hset[#hset + 1] = 'created_at_ms'
  hset[#hset + 1] = ts_s
  redis.call(unpack(hset))
else
  for i = 2, #ARGV, 2 do
    redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
  end
  redis.call('HSETNX', KEYS[1], 'created_at_ms', ts_s)
end

redis.call('ZADD', KEYS[2], version, req.id)
redis.call('ZADD', KEYS[3], ts_s, req.id)
redis.call('ZADD', KEYS[4], ts_s, req.id)
redis.call('ZADD', KEYS[5], 0, req.id)
if req.agent ~= nil and req.agent ~= '' then
  redis.call('HSET', KEYS[10], req.agent, req.id)
  if req.structural_type == 'Failure' then
    redis.call('SADD', KEYS[15], req.agent)
  end
  -- The grant is done: its lease and its inbox entry go with the result,
  -- and the agent's slot passes to its best waiting grant.
  redis.call('DEL', KEYS[13])
  ack_inbox(KEYS[14], req.inbox_group, req.inbox_entry)
  release_agent({running = 16, waiting = 17, replicas = 18, capacity = 19, control = 20, inbox = 14,
    timers = 21, agent = req.agent}, req.claim_id, ts)
  if memory ~= '' then
    -- The agent's latest memory in this workflow, with the result it came
    -- with (the memory was validated JSON before it got here; ids are
    -- plain characters, so the document is built without re-encoding).
    redis.call('HSET', KEYS[22], req.agent, '{"artefact_id":"' .. req.id .. '","claim_id":"' .. (req.claim_id or '') ..
      '","at_ms":' .. ts_s .. ',"memory":' .. memory .. '}')
  end
end

if req.goal then
  local open = 0
  if req.claimable then
    open = 1
  end
  redis.call('HSET', KEYS[7], 'id', req.workflow_id, 'goal', payload, 'status', 'running',
    'priority', tostring(req.priority or 0), 'artefact_count', '1', 'open_items', tostring(open),
    'started_at_ms', ts_s)
  redis.call('ZADD', KEYS[8], ts_s, req.workflow_id)
  emit(KEYS[6], req.workflow_channel, 'workflow_started', ts,
    {'workflow_id', req.workflow_id, 'priority', tostring(req.priority or 0)})
else
  redis.call('HINCRBY', KEYS[7], 'artefact_count', 1)
  -- A claimable artefact is open work until its claim ends; counting it
  -- here (not when the claim appears) means the workflow can never look
  -- finished in the gap between an artefact and its claim.
  if req.claimable and redis.call('HGET', KEYS[7], 'status') == 'running' then
    redis.call('HINCRBY', KEYS[7], 'open_items', 1)
  end
  -- Token budgets: counted with the artefact that reports them,
  -- so each usage counts exactly once (an artefact is written once).
  local tokens = tonumber(req.tokens or 0) or 0
  if tokens > 0 and req.token_agent ~= nil and req.token_agent ~= cjson.null and req.token_agent ~= '' then
    redis.call('HINCRBY', KEYS[7], 'tokens', tokens)
    redis.call('HINCRBY', KEYS[7], 'tokens:' .. req.token_agent, tokens)
    redis.call('HINCRBY', KEYS[23], req.token_agent, tokens)
  end
end

-- The list's filters: the workflow counts the artefacts of each type and
-- of each producing agent (fields of the hash it already holds, so a
-- filtered page reads no artefact). HINCRBY, not HSET: a cub's ACL user
-- may only count on a workflow hash, never set its fields.
redis.call('HINCRBY', KEYS[7], 'type:' .. req.type, 1)
if req.by_agent ~= nil and req.by_agent ~= '' then
  redis.call('HINCRBY', KEYS[7], 'agent:' .. req.by_agent, 1)
end

local announced = {
  'artefact_id', req.id,
  'logical_id', req.logical_id,
  'version', tostring(version),
  'workflow_id', req.workflow_id,
  'claim_id', req.claim_id or '',
  'agent', req.agent or '',
  'type', req.type,
  'structural_type', req.structural_type,
  'produced_by_role', req.produced_by_role,
  'depth', tostring(req.depth or 0),
}
if memory ~= '' then
  announced[#announced + 1] = 'memory'
  announced[#announced + 1] = '1'
end
emit(KEYS[6], req.artefact_channel, 'artefact_created', ts, announced)

-- complete_claim completes the result's claim as described at the top,
-- or returns false (nothing written) when the orchestrator must decide.
local function complete_claim()
  if req.agent == nil or req.agent == '' or req.structural_type == 'Failure' or memory ~= '' then
    return false
  end
  local c = redis.call('HMGET', KEYS[24], 'status', 'finish_plan', 'granted_exclusive_agent', 'kind', 'rev',
    'updated_at_ms', 'artefact_id', 'workflow_id')
  if c[1] ~= 'pending_exclusive' or not c[2] or c[3] ~= req.agent or c[4] == 'learn' or c[8] ~= req.workflow_id then
    return false
  end
  local stored = redis.call('GET', KEYS[11])
  if stored == false or stored ~= c[2] then
    return false
  end
  local w = redis.call('HMGET', KEYS[7], 'status', 'started_at_ms')
  if w[1] ~= 'running' or redis.call('SISMEMBER', KEYS[15], req.agent) == 1 then
    return false
  end
  local id, wf, reason = req.claim_id, req.workflow_id, 'All phases complete.'
  redis.call('HSET', KEYS[24], 'status', 'complete', 'rev', tostring((tonumber(c[5] or '0') or 0) + 1),
    'updated_at_ms', ts_s, 'completion_reason', reason)
  unschedule({claim = 24, active = 25, timers = 21, waiting = 27, running = 26, queue = 12}, id,
    wait_member(w[2], id), ts)
  emit(KEYS[6], req.claim_channel, 'claim_transitioned', ts, {
    'claim_id', id, 'workflow_id', wf, 'from', 'pending_exclusive', 'to', 'complete'})
  emit(KEYS[6], req.claim_channel, 'claim_completed', ts, {
    'workflow_id', wf, 'claim_id', id, 'artefact_id', c[7] or '', 'completed_by', 'result', 'reason', reason})
  -- ended: '1' when this script completed the workflow; 'due' when the
  -- last open item closed but the caller's user may not end a workflow
  -- (a cub's: see internal/acl), so the orchestrator completes it
  -- (complete_workflow.lua) when it reads the queue entry.
  local ended = '0'
  if may(KEYS[7], 'end_workflow') then
    if close_running_item(KEYS[7], KEYS[6], req.workflow_channel, wf, ts, nil) then
      ended = '1'
    end
  elseif redis.call('HINCRBY', KEYS[7], 'open_items', -1) <= 0 then
    ended = 'due'
  end
  enqueue(KEYS[12], 'claim_completed_by_result', {'claim_id', id, 'workflow_id', wf, 'agent', req.agent,
    'artefact_id', req.id, 'phase_ms', tostring(ts - (tonumber(c[6] or ts) or ts)), 'ended', ended, 'ts', ts_s})
  return true
end

-- The orchestrator acts on artefacts that need a claim and on results of
-- a claim (unless the result completed it); reviews and failures without
-- a claim are audit only.
local for_claim = req.claim_id ~= nil and req.claim_id ~= ''
if for_claim and complete_claim() then
  for_claim = false
  for i = 1, #announced, 2 do
    if announced[i] == 'claim_id' then
      announced[i + 1] = '' -- the claim is done: the entry only asks for the next claim
    end
  end
end
if req.claimable or for_claim then
  announced[#announced + 1] = 'ts'
  announced[#announced + 1] = ts_s
  if for_claim and req.agent ~= nil and req.agent ~= '' then
    announced[#announced + 1] = 'target_id'
    announced[#announced + 1] = redis.call('HGET', KEYS[24], 'artefact_id') or ''
  end
  enqueue(KEYS[12], 'artefact_created', announced)
end

if req.goal and not req.claimable then
  end_workflow(KEYS[7], KEYS[6], req.workflow_channel, req.workflow_id, 'completed',
    'the goal is not claimable', ts, KEYS[12])
end

return {'OK', ts_s}
