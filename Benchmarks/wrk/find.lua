-- A find with a where clause on the indexed column and a page (about 100 rows match; the
-- second page of 10). BENCH_TABLE picks the table (Secret: the one with object ACLs);
-- BENCH_QUERY adds parameters (`&loadRelations=parts`: each item's parts at depth 1).
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
local table_name = os.getenv("BENCH_TABLE") or "Item"
local extra = os.getenv("BENCH_QUERY") or ""
function request()
  local path = string.format("%s/data/%s?where=k%%3D%d&pageSize=10&offset=10%s", bench.prefix, table_name,
    math.random(0, bench.buckets - 1), extra)
  return wrk.format("GET", path, bench.headers(false))
end
