-- acquire.lua: decides every limit of one request together, all-or-nothing, in one call.
-- Composed after lib.lua and the algorithm scripts (without their standalone entries),
-- which register in the dispatch table rl_algorithms.
--
-- KEYS     the keys of every limit, in order: as many per limit as its algorithm takes
--          (one, two for a sliding window log: its log and its sum); all in one cluster slot
-- ARGV[1]  now in microseconds, or '' to use Redis TIME
-- ARGV[2]  'acquire', 'check' (decide without consuming) or 'refund' (ARGV[1] is then the
--          timestamp of the acquisition being given back)
-- ARGV[3]  number of limits n
-- ARGV[4..] per limit, four values: algorithm (tb | lb | fw | swl | swc, followed by '!'
--          for a shadow limit, whose rejection does not stop the others), capacity,
--          parameter (emission interval µs for tb and lb, period µs otherwise), cost
-- ARGV[4+4n] optional: least TTL in milliseconds (tests with an explicit now); '' for the
--          default
-- ARGV[5+4n] optional: longest wait in microseconds for a reserved slot (callers waiting
--          for a permit): tb and lb limits that would reject admit instead when their slot
--          is at most that far away, and reply the wait as their delay (see token_bucket.lua)
-- Reply    {now, then per limit three integers}: an admitting limit replies remaining,
--          reset_us, delay_us; a rejecting one -1 - remaining, reset_us, retry_after_us.
--          A refund replies {now}.
--
-- Every limit is decided before any is consumed: either every enforced limit admits and
-- every admitting limit commits (a reservation included), or nothing changes (apart from
-- expiring entries a sliding log no longer counts). A shadow limit that rejects consumes
-- nothing and rejects nothing.

local now = rl_now(ARGV[1])
local mode = ARGV[2]
local n = tonumber(ARGV[3])
local options = 4 + 4 * n
if ARGV[options] and ARGV[options] ~= '' then
  rl_min_ttl = tonumber(ARGV[options])
end
local max_delay = tonumber(ARGV[options + 1] or '0')
local reply = { now }
local size = 1
-- the commits of the admitting limits, kept apart from a table for the usual single one
local commit_first, commits
local allowed = true
local k = 1
for i = 4, options - 1, 4 do
  local code = ARGV[i]
  -- '!' (byte 33) marks a shadow limit
  local shadow = string.byte(code, -1) == 33
  if shadow then
    code = string.sub(code, 1, -2)
  end
  local entry = rl_algorithm(code)
  if entry == nil then
    return redis.error_reply('unknown algorithm ' .. tostring(code))
  end
  local capacity, param, cost = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  if mode == 'refund' then
    entry.refund(k, now, capacity, param, cost)
  else
    local admits, remaining, reset, retry_after, delay, commit = entry.decide(k, now, capacity, param, cost,
      max_delay)
    if admits == 1 then
      reply[size + 1], reply[size + 2], reply[size + 3] = remaining, reset, delay
      if commit_first == nil then
        commit_first = commit
      elseif commits == nil then
        commits = { commit }
      else
        commits[#commits + 1] = commit
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
if allowed and mode == 'acquire' and commit_first then
  commit_first()
  if commits then
    for c = 1, #commits do
      commits[c]()
    end
  end
end
return reply
