-- wrk script: POST one prepared NDJSON attribution request, over and over.
-- The body file is named by $CULPRIT_BENCH_BODY (bench/service/run_wrk.sh).
local f = assert(io.open(os.getenv("CULPRIT_BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/x-ndjson"
