-- inspect.lua: reads the buckets of one identity without consuming anything, for operators.
-- Composed after lib.lua and the algorithm scripts (without their standalone entries),
-- which register in the dispatch table rl_algorithms that acquire.lua dispatches on too.
--
-- KEYS     the keys of every limit, in order: as many per limit as its algorithm takes
--          (one, two for a sliding window log: its log and its sum); all in one cluster slot
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  number of limits n
-- ARGV[3..] per limit, four values: algorithm (tb | lb | fw | swl | swc | cc), capacity,
--          parameter (emission interval µs for tb and lb, period µs otherwise, or the
--          window boundaries of a calendar quota, see rl_parameter), and the bucket's field
--          in the hash its first key names, or '' when the bucket is a key of its own
-- Reply    {now, then per limit: exists (1|0), allowed (1|0), remaining, reset_us,
--          retry_after_us}
--
-- Each limit is decided for a request of cost 1 that is never committed: the reply is what
-- such a request would find now. Nothing is written, apart from a sliding log dropping
-- entries it no longer counts, as every decision does.

local now = rl_now(ARGV[1])
local n = tonumber(ARGV[2])
local reply = { now }
local k = 1
for i = 0, n - 1 do
  local code = ARGV[3 + i * 4]
  local capacity = tonumber(ARGV[4 + i * 4])
  local param = rl_parameter(ARGV[5 + i * 4])
  if ARGV[6 + i * 4] ~= '' then
    rl_fields[k] = ARGV[6 + i * 4]
  end
  local entry = rl_algorithm(code)
  if entry == nil then
    return redis.error_reply('unknown algorithm ' .. tostring(code))
  end
  local exists = rl_exists(k)
  local allowed, remaining, reset, retry_after = entry.decide(k, now, capacity, param, 1, 0)
  k = k + entry.keys
  reply[#reply + 1] = exists
  reply[#reply + 1] = allowed
  reply[#reply + 1] = remaining
  reply[#reply + 1] = reset
  reply[#reply + 1] = retry_after
end
return reply
