-- standalone.lua: the entry point of an algorithm's script run on its own (its header
-- names KEYS, ARGV and the reply); composed after lib.lua and the algorithm scripts, before
-- the standalone entry of one of them. Not part of the drivers.

-- Decides or refunds with one algorithm: ARGV[1] now ('' for Redis TIME), ARGV[2]
-- 'acquire' or 'refund', ARGV[3..5] capacity, parameter, cost, and the longest wait for a
-- reserved slot at ARGV[max_delay_at] (absent: none). Replies {now} to a refund, else
-- {now, allowed, remaining, reset_us, retry_after_us, delay_us}.
local function rl_standalone(code, max_delay_at)
  local entry = rl_algorithm(code)
  local now = rl_now(ARGV[1])
  local capacity, param, cost = tonumber(ARGV[3]), rl_parameter(ARGV[4]), tonumber(ARGV[5])
  if ARGV[2] == 'refund' then
    entry.refund(1, now, capacity, param, cost)
    return { now }
  end
  local allowed, remaining, reset, retry_after, delay, state = entry.decide(1, now, capacity, param, cost,
    tonumber(ARGV[max_delay_at] or '0'))
  if allowed == 1 then
    entry.commit(1, now, capacity, param, cost, state)
  end
  return { now, allowed, remaining, reset, retry_after, delay }
end
