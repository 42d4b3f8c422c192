-- acquire.lua: decides every limit of one request together, all-or-nothing, in one call.
-- Composed after lib.lua and the algorithm scripts (without their standalone entries),
-- which register in the dispatch table rl_algorithms.
--
-- KEYS     the keys of every limit, in order: one per limit, two for a sliding window log
--          (its log and its sum); all in one cluster slot
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
--          is at most that far away, and reply the wait as delay_us (see token_bucket.lua)
-- Reply    {now, then per limit: allowed (1|0), remaining, reset_us, retry_after_us, delay_us}
--
-- Every limit is decided before any is consumed: either every enforced limit admits and
-- every admitting limit commits (a reservation included), or nothing changes (apart from
-- expiring entries a sliding log no longer counts). A shadow limit that rejects consumes
-- nothing and rejects nothing.

local now = rl_now(ARGV[1])
local mode = ARGV[2]
local n = tonumber(ARGV[3])
if ARGV[4 + 4 * n] and ARGV[4 + 4 * n] ~= '' then
  rl_min_ttl = tonumber(ARGV[4 + 4 * n])
end
local max_delay = tonumber(ARGV[5 + 4 * n] or '0')
local reply = { now }
local commits = {}
local allowed = true
local k = 1
for i = 0, n - 1 do
  local algorithm = ARGV[4 + i * 4]
  local shadow = string.sub(algorithm, -1) == '!'
  if shadow then
    algorithm = string.sub(algorithm, 1, -2)
  end
  local capacity = tonumber(ARGV[5 + i * 4])
  local param = tonumber(ARGV[6 + i * 4])
  local cost = tonumber(ARGV[7 + i * 4])
  local entry = rl_algorithms[algorithm]
  if entry == nil then
    return redis.error_reply('unknown algorithm ' .. tostring(algorithm))
  end
  local decision, commit
  if mode == 'refund' then
    entry.refund(k, now, capacity, param, cost)
  else
    decision, commit = entry.decide(k, now, capacity, param, cost, max_delay)
  end
  k = k + entry.keys
  if decision then
    if decision[1] == 0 and not shadow then
      allowed = false
    end
    if commit then
      commits[#commits + 1] = commit
    end
    for j = 1, 5 do
      reply[#reply + 1] = decision[j]
    end
  end
end
if allowed and mode == 'acquire' then
  for _, commit in ipairs(commits) do
    commit()
  end
end
return reply
