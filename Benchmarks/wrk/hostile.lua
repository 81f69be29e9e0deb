-- Inputs the limits refuse before any work: a where clause of 5,000 nested parentheses and one
-- with an IN list of 20,000 items (POST find, 1018), and a query string too long to pass on to
-- data-service (414). Those refusals are the expected answers; any other is counted and fails
-- the run.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
local nested = string.rep("(", 5000) .. "k = 1" .. string.rep(")", 5000)
local items = {}
for i = 1, 20000 do items[i] = tostring(i) end
local long_list = "k IN (" .. table.concat(items, ",") .. ")"
local long_query = string.rep("k%3D1%20OR%20", 3000) .. "k%3D1"
local find = bench.prefix .. "/data/Item/find"
local requests = {
  wrk.format("POST", find, bench.headers(true), '{"where": "' .. nested .. '"}'),
  wrk.format("POST", find, bench.headers(true), '{"where": "' .. long_list .. '"}'),
  wrk.format("GET", bench.prefix .. "/data/Item?where=" .. long_query, bench.headers(false)),
}

local sent = 0
function request()
  sent = sent + 1
  return requests[sent % #requests + 1]
end

unexpected = 0
function response(status)
  if status ~= 400 and status ~= 414 then unexpected = unexpected + 1 end
end

local numbered = setup
local all = {}
function setup(thread)
  numbered(thread)
  table.insert(all, thread)
end

function done()
  local count = 0
  for _, thread in ipairs(all) do count = count + thread:get("unexpected") end
  io.write(string.format("unexpected answers: %d\n", count))
end
