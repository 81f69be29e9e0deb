-- POST /users/login with the benchmark's login user (bcrypt at the configured cost).
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
local body = string.format('{"login": "%s", "password": "%s"}', os.getenv("BENCH_LOGIN"), os.getenv("BENCH_PASSWORD"))
function request()
  return wrk.format("POST", bench.prefix .. "/users/login", bench.headers(true), body)
end
