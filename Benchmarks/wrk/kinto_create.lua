-- Kinto: POST a new record.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
function request()
  local body = string.format('{"data": {"k": %d, "name": "created"}}', math.random(0, bench.buckets - 1))
  return wrk.format("POST", "/v1/buckets/bench/collections/items/records", bench.headers(true), body)
end
