-- GET one fixed path (BENCH_PATH), e.g. a file download.
local path = os.getenv("BENCH_PATH")
function request()
  return wrk.format("GET", path)
end
