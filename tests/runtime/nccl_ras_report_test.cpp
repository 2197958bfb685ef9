// NCCL's RAS report in its JSON form (ncclras -f json, NCCL >= 2.28.7): the
// layout of NVIDIA/nccl src/ras/client_support.cc (jsonWriteHeader,
// jsonStartCommunicator, jsonWriteRankData, jsonWriteMissingRank,
// jsonWriteFooter), and the lines the catalog reads from it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/limits.h"
#include "runtime/nccl_ras_report.h"

using namespace culprit;

namespace {

// One rank as jsonWriteRankData writes it.
std::string rank_json(int rank, const std::string& host, int pid, int gpu, long allreduce, int async_error = 0, bool abort = false,
                      int init_state = 0) {
  return fmt::format(R"({{
          "rank": {},
          "host": "{}",
          "pid": {},
          "cuda_dev": {},
          "nvml_dev": {},
          "status": {{
            "init_state": {},
            "async_error": {},
            "finalize_called": false,
            "destroy_flag": false,
            "abort_flag": {}
          }},
          "collective_counts": {{
            "Broadcast": 2,
            "Reduce": 0,
            "AllGather": 0,
            "ReduceScatter": 0,
            "AllReduce": {}
          }}
        }})",
                     rank, host, pid, gpu, gpu, init_state, async_error, abort ? "true" : "false", allreduce);
}

std::string missing_json(int rank, const std::string& host, int pid, int gpu, bool unresponsive, bool dead) {
  return fmt::format(R"({{"rank": {}, "host": "{}", "pid": {}, "cuda_dev": {}, "nvml_dev": {},
                         "status": {{"unresponsive": {}, "considered_dead": {}}}}})",
                     rank, host, pid, gpu, gpu, unresponsive ? "true" : "false", dead ? "true" : "false");
}

std::string report(const std::vector<std::string>& comms) {
  std::string body;
  for (const auto& c : comms) body += (body.empty() ? "" : ",\n") + c;
  return fmt::format(R"({{
  "nccl_version": "2.28.9",
  "cuda_runtime_version": 12090,
  "cuda_driver_version": 12090,
  "timestamp": "2026-03-14 02:31:07",
  "communicators_count": {},
  "communicators": [
{}
  ],
  "ras": {{
    "collection_time_sec": 5.012,
    "timeouts_count": 1
  }}
}}
)",
                     comms.size(), body);
}

std::string comm_json(const std::string& hash, int size, const std::vector<std::string>& ranks, const std::vector<std::string>& missing) {
  std::string r, m;
  for (const auto& x : ranks) r += (r.empty() ? "" : ",\n") + x;
  for (const auto& x : missing) m += (m.empty() ? "" : ",\n") + x;
  return fmt::format(R"(    {{
      "hash": "{}",
      "secondary_hash": "0x1:0x2",
      "size": {},
      "ranks_count": {},
      "missing_ranks_count": {},
      "ranks": [
{}
      ],
      "missing_ranks": [
{}
      ]
    }})",
                     hash, size, ranks.size(), missing.size(), r, m);
}

std::vector<std::string> texts(const std::vector<Observation>& obs) {
  std::vector<std::string> out;
  for (const auto& o : obs) out.push_back(o.text);
  return out;
}

}  // namespace

TEST_CASE("is_nccl_ras_json: the JSON form opens an object; the text form does not") {
  CHECK(is_nccl_ras_json("{\n  \"nccl_version\": \"2.28.9\""));
  CHECK(is_nccl_ras_json("\n\n  {"));
  CHECK_FALSE(is_nccl_ras_json("Job summary\n===========\n"));
  CHECK_FALSE(is_nccl_ras_json("NCCL version 2.24.3 compiled with CUDA 12.6"));
  CHECK_FALSE(is_nccl_ras_json(""));
  CHECK_FALSE(is_nccl_ras_json("   \n"));
}

TEST_CASE("read_nccl_ras_json: a rank behind, a missing rank, errors; global ranks only in the whole job's communicator") {
  // 4 ranks in the world communicator: rank 2 is behind on AllReduce, rank 3
  // did not answer. A 2-rank communicator (a tensor-parallel pair) where its
  // rank 1 reports an asynchronous error and was aborted.
  std::string doc = report({
      comm_json("0x5d1f", 2,
                {rank_json(0, "10.0.0.1", 101, 0, 40), rank_json(1, "10.0.0.1", 102, 1, 40, 6, true)}, {}),
      comm_json("0xae94423cfbb2ef4a", 4,
                {rank_json(1, "10.0.0.1", 102, 1, 6650), rank_json(0, "10.0.0.1", 101, 0, 6650),
                 rank_json(2, "10.0.0.2", 201, 0, 6649)},
                {missing_json(3, "10.0.0.2", 202, 1, true, false)}),
  });
  std::vector<Observation> out;
  std::string error;
  REQUIRE_MESSAGE(read_nccl_ras_json(doc, "node-01", "logs/node-01/ras.log", 4, out, error), error);
  CHECK(texts(out) == std::vector<std::string>{
            "nccl ras report: 2026-03-14 02:31:07, NCCL 2.28.9, 2 communicators, 1 timeout",
            "nccl ras report: communicator 0x5d1f of 2 ranks: 2 ranks answered, 0 missing",
            "nccl ras report: communicator 0x5d1f of 2 ranks rank 1 reports asynchronous error 6 (ncclRemoteError): process 102 on node "
            "10.0.0.1 managing GPU 1",
            "nccl ras report: communicator 0x5d1f of 2 ranks rank 1 was aborted: process 102 on node 10.0.0.1 managing GPU 1",
            "nccl ras report: communicator 0xae94423cfbb2ef4a of 4 ranks (all the job's ranks): 3 ranks answered, 1 missing",
            "nccl ras report: communicator 0xae94423cfbb2ef4a of 4 ranks (all the job's ranks) rank 3 missing: process 202 on node "
            "10.0.0.2 managing GPU 1 is unresponsive",
            "nccl ras report: communicator 0xae94423cfbb2ef4a of 4 ranks (all the job's ranks) rank 2 launched 6649 AllReduce operations "
            "while 2 ranks launched 6650: process 201 on node 10.0.0.2 managing GPU 0",
        });
  for (size_t i = 0; i < out.size(); ++i) {
    CHECK(out[i].host == "node-01");
    CHECK(out[i].source == "ras");
    CHECK(out[i].file == "logs/node-01/ras.log");
    CHECK(out[i].line == static_cast<int64_t>(i) + 1);
    REQUIRE(out[i].ts.has_value());
    CHECK(*out[i].ts == 1773455467LL * 1000000000LL);  // 2026-03-14T02:31:07Z
  }
  // Without the layout no communicator is known to be the whole job's.
  out.clear();
  REQUIRE(read_nccl_ras_json(doc, "node-01", "f", 0, out, error));
  for (const auto& o : out) CHECK(o.text.find("all the job's ranks") == std::string::npos);
}

TEST_CASE("read_nccl_ras_json: the same report in another order gives the same lines") {
  auto a = comm_json("0xa", 3, {rank_json(0, "h0", 1, 0, 9), rank_json(1, "h1", 2, 0, 9), rank_json(2, "h2", 3, 0, 8)}, {});
  auto b = comm_json("0xb", 2, {rank_json(0, "h0", 1, 1, 5)}, {missing_json(1, "h1", 2, 1, false, true)});
  auto a_shuffled = comm_json("0xa", 3, {rank_json(2, "h2", 3, 0, 8), rank_json(0, "h0", 1, 0, 9), rank_json(1, "h1", 2, 0, 9)}, {});
  std::vector<Observation> x, y;
  std::string error;
  REQUIRE(read_nccl_ras_json(report({a, b}), "n", "f", 0, x, error));
  REQUIRE(read_nccl_ras_json(report({b, a_shuffled}), "n", "f", 0, y, error));
  CHECK(texts(x) == texts(y));
  CHECK(texts(x)[4] == "nccl ras report: communicator 0xb of 2 ranks rank 1 missing: process 2 on node h1 managing GPU 1 is considered dead");
}

TEST_CASE("read_nccl_ras_json: a tie between counts takes the larger as the reference; no line when all agree") {
  std::vector<Observation> out;
  std::string error;
  REQUIRE(read_nccl_ras_json(report({comm_json("0xc", 2, {rank_json(0, "h0", 1, 0, 7), rank_json(1, "h1", 2, 0, 6)}, {})}), "n", "f", 0,
                             out, error));
  REQUIRE(out.size() == 3);
  CHECK(out[2].text.find("rank 1 launched 6 AllReduce operations while 1 rank launched 7") != std::string::npos);
  out.clear();
  REQUIRE(read_nccl_ras_json(report({comm_json("0xc", 2, {rank_json(0, "h0", 1, 0, 7), rank_json(1, "h1", 2, 0, 7)}, {})}), "n", "f", 0,
                             out, error));
  CHECK(out.size() == 2);
}

TEST_CASE("read_nccl_ras_json: what is not a report is refused with a code, and nothing is appended") {
  auto refused = [](const std::string& doc) {
    std::vector<Observation> out;
    std::string error;
    CHECK_FALSE(read_nccl_ras_json(doc, "n", "f", 0, out, error));
    CHECK(out.empty());
    return error;
  };
  CHECK(refused("{\"nccl_version\": ").rfind("RS001: not valid JSON", 0) == 0);
  CHECK(refused("[1, 2]").rfind("RS001: not an NCCL RAS report", 0) == 0);
  CHECK(refused("{\"a\": 1}").rfind("RS001: not an NCCL RAS report", 0) == 0);
  CHECK(refused(R"({"communicators": {}})") == "RS002: communicators is not an array");
  CHECK(refused(R"({"communicators": [{"size": 2}]})") == "RS002: communicators[0].hash is not present");
  CHECK(refused(R"({"communicators": [{"hash": "0x1", "ranks": [{"rank": "zero"}]}]})") ==
        "RS002: communicators[0].ranks[0].rank is not an integer");
  CHECK(refused(R"({"communicators": [{"hash": "0x1", "ranks": [{"rank": 0, "collective_counts": {"AllReduce": 1.5}}]}]})") ==
        "RS002: communicators[0].ranks[0].collective_counts.AllReduce is not an integer");
  CHECK(refused(R"({"communicators": [{"hash": "0x1", "missing_ranks": [{"rank": 0, "status": {"unresponsive": 1}}]}]})") ==
        "RS002: communicators[0].missing_ranks[0].status.unresponsive is not true or false");
  CHECK(refused(R"({"communicators": [], "communicators": []})").rfind("RS001: duplicate key", 0) == 0);
  std::string big(limits::kRasReportBytes + 1, ' ');
  CHECK(refused(big).rfind("RS003: ", 0) == 0);
}
