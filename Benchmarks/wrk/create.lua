-- POST a new object.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
function request()
  local body = string.format('{"k": %d, "name": "created"}', math.random(0, bench.buckets - 1))
  return wrk.format("POST", bench.prefix .. "/data/Item", bench.headers(true), body)
end
