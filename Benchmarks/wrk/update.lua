-- PUT a partial update of a random seeded object.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
function request()
  local path = bench.prefix .. "/data/Item/" .. bench.id(math.random(1, bench.rows))
  return wrk.format("PUT", path, bench.headers(true), string.format('{"name": "updated %d"}', math.random(1, 1000000)))
end
