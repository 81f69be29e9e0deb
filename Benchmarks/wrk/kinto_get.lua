-- Kinto: GET one record of the seeded collection.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
local kinto_rows = tonumber(os.getenv("BENCH_KINTO_ROWS") or "10000")
function request()
  local path = string.format("/v1/buckets/bench/collections/items/records/r%d", math.random(1, kinto_rows))
  return wrk.format("GET", path, bench.headers(false))
end
