-- publish_tool_memory: replace the learnings and handbook texts every tool
-- receives, bumping rev only when one of them changed.
--
-- KEYS[1] tool memory HASH  sett:<i>:tool_memory
--
-- ARGV[1] learnings text
-- ARGV[2] handbook text
--
-- Returns {'OK', rev, changed ('1' or '0')}.
--
-- Cubs read rev with every grant (it rides in the grant's pipeline) and
-- the texts only when rev moved, so an unchanged publish costs them
-- nothing.

local cur = redis.call('HMGET', KEYS[1], 'learnings', 'handbook', 'rev')
if (cur[1] or '') == ARGV[1] and (cur[2] or '') == ARGV[2] and cur[3] then
  return {'OK', cur[3], '0'}
end
local rev = redis.call('HINCRBY', KEYS[1], 'rev', 1)
redis.call('HSET', KEYS[1], 'learnings', ARGV[1], 'handbook', ARGV[2])
return {'OK', tostring(rev), '1'}
