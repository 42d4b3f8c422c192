-- concurrency.lua: at most C units of calls in flight. Each admitted unit holds a lease
-- until the call gives it back or the lease time L runs out (its holder was lost).
--
-- KEYS[1]  bucket key; a sorted set of leases scored by their expiry in µs, members
--          "<expiry>:<n>", at most C of them
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire' or 'refund' (refund: ARGV[1] is the timestamp of the acquisition)
-- ARGV[3]  capacity C
-- ARGV[4]  lease time L in microseconds (the limit's period)
-- ARGV[5]  cost k
-- Reply    {now, allowed (1|0), remaining, reset_us, retry_after_us, delay_us}
--
-- Leases taken at the same time expire together and are interchangeable: a refund gives
-- back k leases expiring at its timestamp plus L, if they have not expired already. A
-- rejected call is told to retry when the first lease expires, and at most a second later,
-- since a release may come at any moment. The key expires with its newest lease.

rl_algorithms.cc = function()
  local max_retry = 1000000

  -- drops the leases whose time ran out and replies how many are held
  local function held(key, now)
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    return redis.call('ZCARD', key)
  end

  local function decide(k, now, capacity, lease, cost)
    local key = KEYS[k]
    local taken = held(key, now)
    if taken + cost <= capacity then
      return 1, capacity - taken - cost, 0, 0, 0, nil
    end
    local retry = max_retry
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if first[2] ~= nil then
      retry = math.min(max_retry, tonumber(first[2]) - now)
    end
    return 0, math.max(0, capacity - taken), retry, retry, 0, nil
  end

  local function commit(k, now, capacity, lease, cost)
    local key = KEYS[k]
    local score = rl_int(now + lease)
    local added, n = 0, 0
    while added < cost do
      n = n + 1
      added = added + redis.call('ZADD', key, 'NX', score, score .. ':' .. n)
    end
    redis.call('PEXPIRE', key, rl_ttl(lease))
  end

  local function refund(k, timestamp, capacity, lease, cost)
    local key = KEYS[k]
    local score = rl_int(timestamp + lease)
    local leases = redis.call('ZRANGEBYSCORE', key, score, score, 'LIMIT', 0, cost)
    if #leases > 0 then
      redis.call('ZREM', key, unpack(leases))
    end
  end

  local function charge()
    error('calls in flight have no cost to settle')
  end

  return { keys = 1, decide = decide, commit = commit, refund = refund, charge = charge }
end

-- standalone entry --
return rl_standalone('cc', 6)
