-- GET one object by id, a random one of the seeded rows.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
function request()
  return wrk.format("GET", bench.prefix .. "/data/Item/" .. bench.id(math.random(1, bench.rows)), bench.headers(false))
end
