-- A radius search: the ten nearest Default points within 200 km of a random center between
-- latitudes -60 and 60 (about 30 of 100,000 seeded points fall in such a circle), distances
-- in kilometres. Center k: latitude k % 120 - 60, longitude floor(k / 120) % 360 - 180, as in
-- the pgbench floor.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
function request()
  local k = math.random(0, 43199)
  local path = string.format("%s/geo/points?lat=%d&lon=%d&r=200&units=KILOMETERS&pagesize=10", bench.prefix,
    k % 120 - 60, math.floor(k / 120) % 360 - 180)
  return wrk.format("GET", path, bench.headers(false))
end
