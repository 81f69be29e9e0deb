-- A count with a where clause on the indexed column.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
function request()
  local path = string.format("%s/data/Item/count?where=k%%3D%d", bench.prefix, math.random(0, bench.buckets - 1))
  return wrk.format("GET", path, bench.headers(false))
end
