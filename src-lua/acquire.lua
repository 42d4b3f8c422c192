-- acquire.lua: decides every limit of one request together, all-or-nothing, in one call.
-- Composed after lib.lua and the algorithm scripts (without their standalone entries),
-- which register in the dispatch table rl_algorithms.
--
-- KEYS     the keys of every limit, in order: as many per limit as its algorithm takes
--          (one, two for a sliding window log: its log and its sum); all in one cluster slot
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire', 'check' (decide without consuming), 'refund' (ARGV[1] is then the
--          timestamp of the acquisition being given back), 'lease' (acquire, and take
--          more units for an instance to spend locally, see ARGV[7+5n..]) or 'settle'
--          (settle acquisitions at their actual costs, see ARGV[7+5n..])
-- ARGV[3]  number of limits n
-- ARGV[4..] per limit, five values: algorithm (tb | lb | fw | swl | swc | cc, followed by '!'
--          for a shadow limit, whose rejection does not stop the others), capacity,
--          parameter (emission interval µs for tb and lb, period µs otherwise, or the
--          window boundaries of a calendar quota, see rl_parameter), cost, and the bucket's
--          field in the hash its first key names, or '' when the bucket is a key of its own
--          (see rl_fields)
-- ARGV[4+5n] optional: least TTL in milliseconds (tests with an explicit now); '' for the
--          default
-- ARGV[5+5n] optional: longest wait in microseconds for a reserved slot (callers waiting
--          for a permit): tb and lb limits that would reject admit instead when their slot
--          is at most that far away, and reply the wait as their delay (see token_bucket.lua)
-- ARGV[6+5n] optional: the deadline, in microseconds of Redis TIME, after which the caller
--          no longer waits for the reply; '' for none (see below)
-- ARGV[7+5n..6+6n] 'lease' only: per limit, how many units to take beyond its cost, as
--          many of them as are left when every enforced limit admits (a cost may then be
--          0: a share refreshed without a request). Only the bucket and window algorithms
--          whose units may be spent later are leased (tb, fw, swc); the application never
--          asks it of the others.
-- ARGV[7+5n] 'settle' only: the timestamp of the acquisitions being settled, whose costs
--          were their reservations; ARGV[8+5n..7+6n] per limit, its actual cost. A limit
--          whose actual cost is below its reservation gives the difference back at that
--          timestamp, as a refund does; one above it is charged the difference at now,
--          beyond the capacity if need be (see rl_algorithms' charge). Never cc.
-- Reply    {now, then per limit three integers}: an admitting limit replies remaining,
--          reset_us, delay_us; a rejecting one -1 - remaining, reset_us, retry_after_us.
--          A refund or a settlement replies {now}. A lease adds, per limit, the units it
--          took beyond the cost (0 when any enforced limit rejected). A call run after its
--          deadline replies {-time}, Redis TIME negated.
--
-- Every limit is decided before any is consumed: either every enforced limit admits and
-- every admitting limit commits (a reservation included), or nothing changes (apart from
-- expiring entries a sliding log no longer counts). A shadow limit that rejects consumes
-- nothing and rejects nothing.
--
-- A call Redis runs after its deadline (it waited behind a slow command, a fork, a DEBUG
-- SLEEP) reads and writes nothing: its caller has given up on it and had the request
-- decided elsewhere, so what it took would be taken twice, and a lease it took would be
-- released by nobody. The deadline is compared with Redis TIME even when ARGV[1] is given.

local argv = ARGV
local now = rl_now(argv[1])
local mode = argv[2]
local n = tonumber(argv[3])
local options = 4 + 5 * n
-- set on every call, as the bucket fields below: run as a Redis function, the helpers'
-- state outlives the call
if argv[options] and argv[options] ~= '' then
  rl_min_ttl = tonumber(argv[options])
else
  rl_min_ttl = RL_MIN_TTL
end
local deadline = argv[options + 2]
if deadline and deadline ~= '' then
  local time = now
  if argv[1] ~= '' then
    time = rl_now('')
  end
  if time > tonumber(deadline) then
    return { -time }
  end
end
local max_delay = 0
if argv[options + 1] then
  max_delay = tonumber(argv[options + 1])
end
local refund = mode == 'refund'
local lease = mode == 'lease'
local settle = mode == 'settle'
local reserved_at
if settle then
  reserved_at = tonumber(argv[options + 3])
end
-- one limit, the usual call, gets its reply at its size rather than grown twice
local reply
if n == 1 and not refund and not settle then
  reply = { now, 0, 0, 0 }
else
  reply = { now }
end
local size = 1
local allowed = true
-- what the admitting limits commit: the first in locals, any further one in `more`, six
-- values each (entry, first key, capacity, parameter, cost, state)
local entry1, k1, capacity1, param1, cost1, state1
local more
local m = 0
local k = 1
for i = 4, options - 1, 5 do
  local code = argv[i]
  -- '!' (byte 33) marks a shadow limit
  local shadow = string.byte(code, -1) == 33
  if shadow then
    code = string.sub(code, 1, -2)
  end
  local entry = rl_algorithm(code)
  if entry == nil then
    return redis.error_reply('unknown algorithm ' .. tostring(code))
  end
  local capacity, param, cost = tonumber(argv[i + 1]), rl_parameter(argv[i + 2]), tonumber(argv[i + 3])
  if argv[i + 4] ~= '' then
    rl_fields[k] = argv[i + 4]
  else
    rl_fields[k] = nil
  end
  if refund then
    entry.refund(k, now, capacity, param, cost)
  elseif settle then
    local actual = tonumber(argv[options + 4 + (i - 4) / 5])
    if actual < cost then
      entry.refund(k, reserved_at, capacity, param, cost - actual, cost)
    elseif actual > cost then
      entry.charge(k, now, capacity, param, actual - cost)
    end
  else
    local admits, remaining, reset, retry_after, delay, state = entry.decide(k, now, capacity, param, cost,
      max_delay)
    if lease then
      -- the units beyond the cost, as many as are left: deciding cost + extra again admits
      local extra = math.min(tonumber(argv[options + 2 + (i - 4) / 5 + 1]), remaining)
      if admits == 1 and extra > 0 then
        local admits2, remaining2, reset2, _, delay2, state2 = entry.decide(k, now, capacity, param, cost + extra,
          max_delay)
        if admits2 == 1 then
          cost, remaining, reset, delay, state = cost + extra, remaining2, reset2, delay2, state2
        else
          extra = 0
        end
      elseif admits ~= 1 then
        extra = 0
      end
      reply[1 + 3 * n + (i - 4) / 5 + 1] = extra
    end
    if admits == 1 then
      reply[size + 1], reply[size + 2], reply[size + 3] = remaining, reset, delay
      if entry1 == nil then
        entry1, k1, capacity1, param1, cost1, state1 = entry, k, capacity, param, cost, state
      else
        more = more or {}
        more[m + 1], more[m + 2], more[m + 3], more[m + 4], more[m + 5], more[m + 6] = entry, k, capacity, param,
          cost, state
        m = m + 6
      end
    else
      reply[size + 1], reply[size + 2], reply[size + 3] = -1 - remaining, reset, retry_after
      if not shadow then
        allowed = false
      end
    end
    size = size + 3
  end
  k = k + entry.keys
end
if allowed and (mode == 'acquire' or lease) and entry1 ~= nil then
  entry1.commit(k1, now, capacity1, param1, cost1, state1)
  if more then
    for c = 1, m, 6 do
      more[c].commit(more[c + 1], now, more[c + 2], more[c + 3], more[c + 4], more[c + 5])
    end
  end
end
if lease and not allowed then
  for i = 1, n do
    reply[1 + 3 * n + i] = 0
  end
end
return reply
