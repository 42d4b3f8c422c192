-- sliding_window_log.lua: exactly at most C units in any interval of length P.
--
-- KEYS[1]  log key; a sorted set of admitted requests, score = time in microseconds,
--          member = "<time>:<cost>:<n>", n the units used after it, raised past any member
--          a refund left behind so that members stay unique
-- KEYS[2]  sum key; a string holding the units the log currently holds
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire' or 'refund' (refund: ARGV[1] is the timestamp of the acquisition)
-- ARGV[3]  capacity C
-- ARGV[4]  period P in microseconds
-- ARGV[5]  cost k
-- Reply    {now, allowed (1|0), remaining, reset_us, retry_after_us, delay_us}
--
-- Rejected requests are not logged, so the log never holds more than C entries (unless a
-- charge logged more). Both keys expire one period after the last admitted request. A
-- charge (a settlement beyond its reservation) logs its units at now, as a request
-- admitted then; a settlement below its reservation shrinks the reservation's entry.

rl_algorithms.swl = function()
  local function cost_of(member)
    return tonumber(string.match(member, '^[^:]+:(%d+):'))
  end

  -- Drops entries a whole period old and returns the units still logged.
  local function expire(key, sum_key, horizon)
    local stored = redis.call('GET', sum_key)
    local used = 0
    if stored then
      used = tonumber(stored)
    else
      -- the sum expired apart from the log: count the log again
      local members = redis.call('ZRANGE', key, 0, -1)
      for _, member in ipairs(members) do
        used = used + cost_of(member)
      end
    end
    local expired = redis.call('ZRANGEBYSCORE', key, '-inf', rl_int(horizon))
    if #expired > 0 then
      for _, member in ipairs(expired) do
        used = used - cost_of(member)
      end
      redis.call('ZREMRANGEBYSCORE', key, '-inf', rl_int(horizon))
      -- the sum expires with the log (a lost sum must not come back without a TTL); a
      -- millisecond early, since the log's PTTL and the SET may read the clock apart
      local ttl = redis.call('PTTL', key)
      if ttl > 1 then
        redis.call('SET', sum_key, rl_int(used), 'PX', ttl - 1)
      else
        redis.call('DEL', sum_key)
      end
    end
    return used
  end

  -- Time until enough entries have expired for `units` more to fit.
  local function until_free(key, used, units, capacity, period, now)
    local needed = used + units - capacity
    local freed = 0
    local entries = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
    for i = 1, #entries, 2 do
      freed = freed + cost_of(entries[i])
      if freed >= needed then
        return tonumber(entries[i + 1]) + period - now
      end
    end
    return period
  end

  local function decide(k, now, capacity, period, cost)
    local key, sum_key = KEYS[k], KEYS[k + 1]
    local used = expire(key, sum_key, now - period)
    if used + cost <= capacity then
      local oldest = now
      local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
      if #first > 0 then
        oldest = tonumber(first[2])
      end
      return 1, capacity - used - cost, oldest + period - now, 0, 0, used
    end
    local remaining = math.max(0, capacity - used)
    return 0, remaining, until_free(key, used, remaining + 1, capacity, period, now),
      until_free(key, used, cost, capacity, period, now), 0, nil
  end

  -- both keys expire one period after the last admitted request
  local function commit(k, now, capacity, period, cost, used)
    local key, sum_key = KEYS[k], KEYS[k + 1]
    -- after a refund at this same instant, "<n>" may already be taken: ZADD would then
    -- overwrite that entry instead of logging this one
    local prefix = rl_int(now) .. ':' .. rl_int(cost) .. ':'
    local n = used + cost
    while redis.call('ZSCORE', key, prefix .. rl_int(n)) do
      n = n + 1
    end
    redis.call('ZADD', key, rl_int(now), prefix .. rl_int(n))
    redis.call('SET', sum_key, rl_int(used + cost), 'PX', rl_ttl(period))
    redis.call('PEXPIRE', key, rl_ttl(period))
  end

  -- gives back `cost` units of the entry logged at `timestamp` with `logged` units (all of
  -- it when logged is nil): the entry is removed, or shrunk to what is left of it
  local function refund(k, timestamp, capacity, period, cost, logged)
    local key, sum_key = KEYS[k], KEYS[k + 1]
    logged = logged or cost
    local candidates = redis.call('ZRANGEBYSCORE', key, rl_int(timestamp), rl_int(timestamp))
    for i = #candidates, 1, -1 do
      if cost_of(candidates[i]) == logged then
        redis.call('ZREM', key, candidates[i])
        if logged > cost then
          local prefix = rl_int(timestamp) .. ':' .. rl_int(logged - cost) .. ':'
          local n = tonumber(string.match(candidates[i], ':(%d+)$'))
          while redis.call('ZSCORE', key, prefix .. rl_int(n)) do
            n = n + 1
          end
          redis.call('ZADD', key, rl_int(timestamp), prefix .. rl_int(n))
        end
        local used = redis.call('GET', sum_key)
        -- without a sum the next decision counts the log again
        if used then
          redis.call('SET', sum_key, rl_int(math.max(0, tonumber(used) - cost)), 'KEEPTTL')
        end
        return
      end
    end
  end

  local function charge(k, now, capacity, period, cost)
    commit(k, now, capacity, period, cost, expire(KEYS[k], KEYS[k + 1], now - period))
  end

  return { keys = 2, decide = decide, commit = commit, refund = refund, charge = charge }
end

-- standalone entry --
return rl_standalone('swl', 6)
