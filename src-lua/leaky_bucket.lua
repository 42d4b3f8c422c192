-- leaky_bucket.lua: a queue of C places drained at one place per emission interval T.
-- An admitted request is delayed until its drain slot (like nginx limit_req without
-- nodelay); a request that does not fit in the queue is rejected, so no request waits
-- longer than C*T. The same one-timestamp state (GCRA) as token_bucket.lua, whose
-- functions it runs; composed after it.
--
-- KEYS[1]  bucket key; a string '<tat>:<T>': the time (microseconds) the queue is empty
--          again and the emission interval it was computed with, as in token_bucket.lua
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire' or 'refund' (refund: ARGV[1] is the timestamp of the acquisition)
-- ARGV[3]  capacity C (queue places)
-- ARGV[4]  emission interval T in microseconds (period / refill tokens, rounded up)
-- ARGV[5]  cost k
-- ARGV[6]  optional: longest wait in microseconds for a reserved drain slot (0 or absent:
--          none); a request that does not fit in the queue is then admitted when its
--          drain slot is at most that far away
-- Reply    {now, allowed (1|0), remaining places, reset_us, retry_after_us, delay_us}
--
-- The key expires when the queue is empty again.

rl_algorithms.lb = {
  keys = 1,
  decide = function(k, now, capacity, interval, cost, max_delay)
    return gcra.decide(KEYS[k], now, capacity, interval, cost, 1, max_delay)
  end,
  refund = rl_algorithms.tb.refund,
}

-- standalone entry --
local now = rl_now(ARGV[1])
local capacity, interval, cost = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if ARGV[2] == 'refund' then
  gcra.refund(KEYS[1], now, capacity, interval, cost)
  return { now }
end
local decision, commit = gcra.decide(KEYS[1], now, capacity, interval, cost, 1, tonumber(ARGV[6] or '0'))
if commit then
  commit()
end
return { now, decision[1], decision[2], decision[3], decision[4], decision[5] }
