-- token_bucket.lua: token bucket, kept as one timestamp (GCRA); leaky_bucket.lua runs the
-- same functions with ARGV[6] = 1.
--
-- KEYS[1]  bucket key (or, in the hash-per-slot key layout, the hash whose field it is, see
--          rl_fields); 12 bytes: the time (microseconds) at which the bucket is full
--          again (leaky bucket: the time its queue is empty again), a signed big-endian
--          7-byte integer, then the emission interval it was computed with, an unsigned
--          big-endian 5-byte integer (7 bytes, so 14 in all, for intervals of 2^40 µs, about
--          12.7 days, and more). A value of another size is read as no bucket.
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire' or 'refund' (refund: ARGV[1] is the timestamp of the acquisition);
--          the driver also charges (a settlement beyond its reservation, acquire.lua)
-- ARGV[3]  capacity C
-- ARGV[4]  emission interval T in microseconds (period / refill tokens, rounded up)
-- ARGV[5]  cost k
-- ARGV[6]  1 for a leaky bucket (admitted requests are delayed to their drain slot), else 0
-- ARGV[7]  optional: longest wait in microseconds for a reserved slot (0 or absent: none)
-- Reply    {now, allowed (1|0), remaining, reset_us, retry_after_us, delay_us}
--
-- The bucket holds C - (tat - now) / T tokens; a request of cost k is admitted when
-- max(tat, now) + k*T - now <= C*T. A request that may reserve (a caller waiting for a
-- permit) is also admitted when its slot, the time its cost fits, is at most the longest
-- wait away (a leaky bucket: its drain slot); the tat then runs ahead of the burst and
-- delay_us is the wait, so callers reserving in turn get slots T apart. The key expires
-- when the bucket is full again, which is after every reserved slot.
-- A bucket written with another interval (its identity moved to another plan) keeps its
-- debt in tokens: tat = now + ceil((tat - now) * T / T_old), as the in-memory store does.
-- A charge moves the tat on by k*T without deciding, past the burst if need be: the bucket
-- is then in debt, rejecting until it has refilled past it, and expires when full again.

rl_algorithms.tb = function()
  -- leaky: 1 for a leaky bucket, whose admitted requests wait for their drain slot
  -- the time a request at `now` starts from: when the bucket is full again (its debt
  -- re-priced at this interval), or now when it is full
  local function start_of(k, now, interval)
    local value = rl_read(k)
    if value then
      -- the time the bucket is full again and the interval it was computed with
      local tat, written
      if #value == 12 then
        tat, written = struct.unpack('>i7I5', value)
      elseif #value == 14 then
        tat, written = struct.unpack('>i7I7', value)
      end
      if tat ~= nil and tat > now then
        if written ~= interval then
          tat = now + math.ceil((tat - now) * interval / written)
        end
        return tat
      end
    end
    return now
  end

  local function decide(k, now, capacity, interval, cost, max_delay, leaky)
    local burst = capacity * interval
    local start = start_of(k, now, interval)
    local new_tat = start + cost * interval
    local debt = new_tat - now
    if debt <= burst then
      local delay = 0
      if leaky == 1 then
        delay = start - now
      end
      -- reset: until the debt shrinks by one whole interval
      return 1, math.floor((burst - debt) / interval), ((debt - 1) % interval) + 1, 0, delay, new_tat
    end
    local wait = debt - burst
    if max_delay ~= nil and max_delay > 0 then
      local delay = wait
      if leaky == 1 then
        delay = start - now
      end
      if delay <= max_delay then
        -- nothing is left until the bucket has drained past this reservation
        return 1, 0, wait + interval, 0, delay, new_tat
      end
    end
    debt = start - now
    local reset = 0
    if debt > burst then
      reset = debt - burst + interval
    elseif debt > 0 then
      reset = ((debt - 1) % interval) + 1
    end
    return 0, math.max(0, math.floor((burst - debt) / interval)), reset, wait, 0, nil
  end

  -- the value begins with the time the bucket stops mattering, as a bucket kept in a hash
  -- must (see rl_fields)
  local function pack(tat, interval)
    if interval < 1099511627776 then
      return struct.pack('>i7I5', tat, interval)
    end
    return struct.pack('>i7I7', tat, interval)
  end

  -- the bucket expires when it is full again
  local function commit(k, now, capacity, interval, cost, new_tat)
    rl_write(k, now, pack(new_tat, interval), new_tat)
  end

  local function refund(k, timestamp, capacity, interval, cost)
    local value = rl_read(k)
    local tat, written
    if value and #value == 12 then
      tat, written = struct.unpack('>i7I5', value)
    elseif value and #value == 14 then
      tat, written = struct.unpack('>i7I7', value)
    end
    if tat ~= nil then
      -- the debt is priced at the interval it was recorded with
      rl_write(k, timestamp, pack(tat - cost * written, written))
    end
  end

  -- a charge records like a commit, without deciding: the tat may run past the burst
  local function charge(k, now, capacity, interval, cost)
    commit(k, now, capacity, interval, cost, start_of(k, now, interval) + cost * interval)
  end

  return { keys = 1, decide = decide, commit = commit, refund = refund, charge = charge }
end

-- standalone entry --
if ARGV[6] == '1' then
  return rl_standalone('lb', 7)
end
return rl_standalone('tb', 7)
