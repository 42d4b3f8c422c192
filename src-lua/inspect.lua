-- inspect.lua: reads the buckets of one identity without consuming anything, for operators.
-- Composed after lib.lua and the algorithm scripts (without their standalone entries).
--
-- KEYS     the keys of every limit, in order: one per limit, two for a sliding window log
--          (its log and its sum); all in one cluster slot
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  number of limits n
-- ARGV[3..] per limit, three values: algorithm (tb | lb | fw | swl | swc), capacity,
--          parameter (emission interval µs for tb and lb, period µs otherwise)
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
  local algorithm = ARGV[3 + i * 3]
  local capacity = tonumber(ARGV[4 + i * 3])
  local param = tonumber(ARGV[5 + i * 3])
  local exists = redis.call('EXISTS', KEYS[k])
  local decision
  if algorithm == 'tb' then
    decision = gcra.decide(KEYS[k], now, capacity, param, 1, 0)
    k = k + 1
  elseif algorithm == 'lb' then
    decision = gcra.decide(KEYS[k], now, capacity, param, 1, 1)
    k = k + 1
  elseif algorithm == 'fw' then
    decision = fixed_window.decide(KEYS[k], now, capacity, param, 1)
    k = k + 1
  elseif algorithm == 'swl' then
    decision = sliding_window_log.decide(KEYS[k], KEYS[k + 1], now, capacity, param, 1)
    k = k + 2
  elseif algorithm == 'swc' then
    decision = sliding_window_counter.decide(KEYS[k], now, capacity, param, 1)
    k = k + 1
  else
    return redis.error_reply('unknown algorithm ' .. tostring(algorithm))
  end
  reply[#reply + 1] = exists
  for j = 1, 4 do
    reply[#reply + 1] = decision[j]
  end
end
return reply
