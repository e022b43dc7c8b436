-- submit_bid: record an agent's bid on a claim, once.
--
-- KEYS[1] bids HASH       sett:<i>:claim:<id>:bids
-- KEYS[2] claim HASH      sett:<i>:claim:<id>
-- KEYS[3] events STREAM   sett:<i>:events
-- KEYS[4] orchestrator queue STREAM  sett:<i>:orchestrator:queue
-- KEYS[5] agent inbox STREAM         sett:<i>:agent:<agent>:inbox
-- KEYS[6] workflow HASH              sett:<i>:workflow:<wf> (any key without req.snapshot)
--
-- ARGV[1] JSON request: claim_id, agent, bid, claim_channel, and
--         optionally inbox_entry and inbox_group: the bid request being
--         answered, acknowledged whatever the outcome (every outcome
--         finishes it); snapshot (true: the bids_complete entry carries
--         the claim, its bids and the workflow status as JSON, so the
--         orchestrator can grant without reading them — its write is a
--         compare-and-set on the claim's rev, so a stale snapshot cannot
--         apply).
--
-- Returns {'OK'} or
--   {'NOT_FOUND', 'claim'}
--   {'STALE_STATUS', status}   consensus is over (the bid came too late)
--   {'NOT_INVITED', agent}     the agent is not among the expected bidders
--   {'EXISTS', bid}            the agent already bid (the stored bid)
--
-- Crash safety: HSETNX, the bid_submitted event, the orchestrator's queue
-- entry and the inbox acknowledgement happen in one atomic script, so a
-- stored bid is announced exactly once and its request never redone.

local req = cjson.decode(ARGV[1])
ack_inbox(KEYS[5], req.inbox_group, req.inbox_entry)
local claim = redis.call('HMGET', KEYS[2], 'status', 'expected_bidders', 'workflow_id')
if claim[1] == false then
  return {'NOT_FOUND', 'claim'}
end
if claim[1] ~= 'pending_consensus' then
  return {'STALE_STATUS', claim[1]}
end
local invited = false
local expected = {}
if claim[2] then
  expected = cjson.decode(claim[2])
  for _, a in ipairs(expected) do
    if a == req.agent then
      invited = true
      break
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
local answered = 0
for _, v in ipairs(redis.call('HMGET', KEYS[1], unpack(expected))) do
  if v then
    answered = answered + 1
  end
end
if answered >= #expected then
  local fields = {'claim_id', req.claim_id, 'workflow_id', claim[3] or '', 'ts', tostring(ts)}
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
end
return {'OK'}
