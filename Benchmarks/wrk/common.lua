-- Shared by every wrk script: the request prefix and keys from the environment the harness
-- sets, a per-thread random seed, and the seeded objects' ids (the same formula the seeding
-- SQL and the pgbench scripts use).
bench = {
  prefix = os.getenv("BENCH_PREFIX") or "",
  rows = tonumber(os.getenv("BENCH_ROWS") or "100000"),
  buckets = tonumber(os.getenv("BENCH_BUCKETS") or "1000"),
  token = os.getenv("BENCH_TOKEN"),
  authorization = os.getenv("BENCH_AUTHORIZATION"),
}

function bench.id(n)
  return string.format("00000000-0000-4000-8000-%012d", n)
end

function bench.headers(json)
  local headers = {}
  if json then headers["Content-Type"] = "application/json" end
  if bench.token then headers["user-token"] = bench.token end
  if bench.authorization then headers["Authorization"] = bench.authorization end
  return headers
end

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

function init(args)
  math.randomseed(7919 * (thread_number or 1) + os.time())
end
