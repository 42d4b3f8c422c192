-- leaky_bucket.lua: a queue of C places drained at one place per emission interval T.
-- An admitted request is delayed until its drain slot (like nginx limit_req without
-- nodelay); a request that does not fit in the queue is rejected, so no request waits
-- longer than C*T. The same one-timestamp state (GCRA) as token_bucket.lua, whose
-- functions it runs; composed after it.
--
-- KEYS[1]  bucket key; the time (microseconds) the queue is empty again and the emission
--          interval it was computed with, encoded as in token_bucket.lua
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

rl_algorithms.lb = function()
  local token_bucket = rl_algorithm('tb')
  local decide = token_bucket.decide
  return {
    keys = 1,
    decide = function(k, now, capacity, interval, cost, max_delay)
      return decide(k, now, capacity, interval, cost, max_delay, 1)
    end,
    commit = token_bucket.commit,
    refund = token_bucket.refund,
    charge = token_bucket.charge,
  }
end

-- standalone entry --
return rl_standalone('lb', 6)
