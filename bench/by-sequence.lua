-- wrk script: GET /api/v1/topics/<topic>/messages/<random sequence number>
local topic = os.getenv("TOPIC") or "0.0.1000"
local maxSeq = tonumber(os.getenv("MAX_SEQ") or "500000")
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/api/v1/topics/" .. topic .. "/messages/" .. math.random(1, maxSeq))
end
