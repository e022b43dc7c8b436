-- submit_bid: record an agent's bid on a claim, once.
--
-- KEYS[1] bids HASH       sett:<i>:claim:<id>:bids
-- KEYS[2] claim HASH      sett:<i>:claim:<id>
-- KEYS[3] events STREAM   sett:<i>:events
--
-- ARGV[1] JSON request: claim_id, agent, bid, claim_channel
--
-- Returns {'OK'} or
--   {'NOT_FOUND', 'claim'}
--   {'STALE_STATUS', status}   consensus is over (the bid came too late)
--   {'NOT_INVITED', agent}     the agent is not among the expected bidders
--   {'EXISTS', bid}            the agent already bid (the stored bid)
--
-- Crash safety: HSETNX and the bid_submitted event happen in one atomic
-- script, so the orchestrator sees every stored bid announced exactly once.

local req = cjson.decode(ARGV[1])
local claim = redis.call('HMGET', KEYS[2], 'status', 'expected_bidders', 'workflow_id')
if claim[1] == false then
  return {'NOT_FOUND', 'claim'}
end
if claim[1] ~= 'pending_consensus' then
  return {'STALE_STATUS', claim[1]}
end
local invited = false
if claim[2] then
  for _, a in ipairs(cjson.decode(claim[2])) do
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
emit(KEYS[3], req.claim_channel, 'bid_submitted', now_ms(), {
  'claim_id', req.claim_id,
  'workflow_id', claim[3] or '',
  'agent', req.agent,
  'bid', req.bid,
})
return {'OK'}
