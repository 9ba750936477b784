-- wrk script: GET /api/v1/topics/<topic>/messages/<random sequence number>,
-- the by-sequence route of `make bench` for a cross-check with Debian's wrk
-- against a service on the benchmark database (hot topic 0.0.2001):
--   TOPIC=0.0.2001 wrk -t2 -c32 -d8s --latency -s bench/by-sequence.lua http://127.0.0.1:8080
local topic = os.getenv("TOPIC") or "0.0.2001"
local maxSeq = tonumber(os.getenv("MAX_SEQ") or "500000")
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/api/v1/topics/" .. topic .. "/messages/" .. math.random(1, maxSeq))
end
