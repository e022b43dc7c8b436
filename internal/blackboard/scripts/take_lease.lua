-- take_lease: a cub takes the work lease for a grant it is about to run.
--
-- KEYS[1] claim HASH     sett:<i>:claim:<id>
-- KEYS[2] grants HASH    sett:<i>:claim:<id>:grants
-- KEYS[3] outputs HASH   sett:<i>:claim:<id>:outputs
-- KEYS[4] lease STRING   sett:<i>:lease:<id>:<agent>
--
-- ARGV[1] agent
-- ARGV[2] grant token the cub received
-- ARGV[3] lease TTL in milliseconds
-- ARGV[4] holder: the consumer name of the cub taking it
--
-- Returns {'OK'} or
--   {'NOT_FOUND', 'claim'}
--   {'STALE_GRANT', current_token}  the grant was re-issued; drop this one
--   {'EXISTS', artefact_id}         the agent already delivered (a replay)
--   {'STALE_STATUS', status}        the claim has ended
--   {'HELD', holder}                another replica holds a live lease on
--                                   this very grant: it runs it, not us
--
-- The lease value is "<token>|<holder>", so a lease left by an older
-- attempt can never be extended or released by a newer one and vice
-- versa, and one grant has one owner: a second replica that got hold of
-- the grant's entry cannot take the lease while the first one's lives.

local status = redis.call('HGET', KEYS[1], 'status')
if status == false then
  return {'NOT_FOUND', 'claim'}
end
local token = redis.call('HGET', KEYS[2], ARGV[1])
if token == false or token ~= ARGV[2] then
  return {'STALE_GRANT', token or ''}
end
local out = redis.call('HGET', KEYS[3], ARGV[1])
if out then
  return {'EXISTS', out}
end
if status == 'complete' or status == 'terminated' then
  return {'STALE_STATUS', status}
end
local want = ARGV[2] .. '|' .. ARGV[4]
local cur = redis.call('GET', KEYS[4])
if cur and cur ~= want then
  local sep = string.find(cur, '|', 1, true)
  if sep and string.sub(cur, 1, sep - 1) == ARGV[2] then
    return {'HELD', string.sub(cur, sep + 1)}
  end
  -- A lease of an older token: that grant was re-issued, this one is
  -- current, and the old holder loses its lease at its next beat.
end
redis.call('SET', KEYS[4], want, 'PX', ARGV[3])
return {'OK'}
