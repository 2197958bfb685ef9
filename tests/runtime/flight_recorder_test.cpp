// Flight Recorder dumps: the layout of FlightRecorderDetail.hpp's dump_dict
// and dump_json, read from the three forms a job leaves (PyTorch's pickler,
// a Python re-pickle, JSON; tests/runtime/data/flight_recorder/make.py),
// and the lines the catalog reads from them.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "runtime/flight_recorder.h"

using namespace culprit;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(CULPRIT_SOURCE_DIR) + "/tests/runtime/data/flight_recorder/" + name, std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

FlightRecorderDump read_ok(const std::string& name, int64_t rank, const std::string& host) {
  FlightRecorderDump d;
  std::string error;
  bool ok = read_flight_recorder_dump(fixture(name), rank, host, "traces/" + host + "/" + name, d, error);
  REQUIRE_MESSAGE(ok, error);
  return d;
}

std::string read_error(const std::string& bytes) {
  FlightRecorderDump d;
  std::string error;
  CHECK_FALSE(read_flight_recorder_dump(bytes, 0, "h", "f", d, error));
  return error;
}

}  // namespace

TEST_CASE("flight recorder: the rank is the trailing number of the file name, as fr_trace reads it") {
  CHECK(flight_recorder_rank_from_name("nccl_trace_rank_12") == 12);
  CHECK(flight_recorder_rank_from_name("fr_dump_3.json") == 3);
  CHECK(flight_recorder_rank_from_name("trace7.pkl") == 7);
  CHECK(flight_recorder_rank_from_name("nccl_trace_rank_") == -1);
  CHECK(flight_recorder_rank_from_name("README.md") == -1);
  CHECK(flight_recorder_rank_from_name("x12345678901") == -1);  // not a rank: too many digits
}

TEST_CASE("flight recorder: PyTorch's pickle, a Python re-pickle and the JSON form read alike") {
  for (const auto& form : {std::pair<const char*, int>{"nccl_trace_rank_0", 0}, {"nccl_trace_rank_1", 1}}) {
    const char* name = form.first;
    CAPTURE(name);
    FlightRecorderDump d = read_ok(name, form.second, "node-01");
    CHECK(d.version == "2.4");
    CHECK(d.comm_lib_version == "2.21.5");
    REQUIRE(d.entries.size() == 3);
    const FlightRecorderEntry& last = d.entries.back();
    CHECK(last.pg_id == 0);
    CHECK(last.pg_name == "0");
    CHECK(last.pg_desc == "default_pg");
    CHECK(last.collective_seq_id == 43);
    CHECK(last.profiling_name == "nccl:all_reduce");
    CHECK(last.state == "started");
    CHECK(last.input_sizes == "[[1024, 8]]");
    CHECK_FALSE(last.is_p2p);
    CHECK(last.timeout_ms == 600000);
    REQUIRE(last.time_created_ns);
    CHECK(*last.time_created_ns == 1764497400000000000 + 43'000'000'000);
    // Frame 0 is PyTorch's own all_reduce: the job's call site is the next.
    CHECK(last.frame == "train_step at /workspace/train.py:118");
    REQUIRE(d.groups.size() == 1);
    CHECK(d.groups[0].ranks == std::vector<int64_t>{0, 1, 2, 3});
    CHECK(d.groups[0].last_enqueued == 43);
    CHECK(d.groups[0].last_completed == 42);
  }
  FlightRecorderDump j = read_ok("nccl_trace_rank_2", 2, "node-02");
  REQUIRE(j.entries.size() == 4);
  CHECK(j.entries[3].pg_desc == "tp");
  CHECK(j.entries[3].state == "scheduled");
  CHECK(j.entries[3].frame.empty());  // the JSON form has no frames
  REQUIRE(j.groups.size() == 2);
  CHECK(j.groups[1].pg_id == 1);
  CHECK(j.groups[1].last_started == 6);  // pg_status values are strings in JSON
}

TEST_CASE("flight recorder: the rendered lines, with the members that left no dump placed by the layout") {
  std::vector<FlightRecorderDump> dumps = {read_ok("nccl_trace_rank_2", 2, "node-02"), read_ok("nccl_trace_rank_0", 0, "node-01")};
  auto obs = flight_recorder_observations(dumps, [](int64_t r) { return r >= 2 ? std::string("node-02") : std::string("node-01"); });
  REQUIRE(obs.size() == 1 + 1 + 3 + 1 + 2 + 4);
  // Sorted by rank, whatever order the dumps came in.
  CHECK(obs[0].host == "node-01");
  CHECK(obs[0].source == "flight_recorder");
  CHECK(obs[0].file == "traces/node-01/nccl_trace_rank_0");
  CHECK(obs[0].line == 1);
  CHECK(obs[0].text == "flight recorder: rank 0 dump version 2.4 (nccl 2.21.5): 3 entries");
  CHECK(obs[1].text ==
        "flight recorder: rank 0 process group 0 \"default_pg\" (name \"0\", 4 ranks): last enqueued collective 43, last started 43, "
        "last completed 42; 2 ranks without a dump: 1 (node-01), 3 (node-02)");
  CHECK(obs[4].text ==
        "flight recorder: rank 0 process group 0 \"default_pg\" collective #43 nccl:all_reduce started, input sizes [[1024, 8]], "
        "output sizes [[1024, 8]], called from train_step at /workspace/train.py:118");
  REQUIRE(obs[4].ts);
  CHECK(obs[5].host == "node-02");
  CHECK(obs[7].text ==
        "flight recorder: rank 2 process group 1 \"tp\" (name \"1\", 2 ranks): last enqueued collective 7, last started 6, last completed 6; "
        "1 rank without a dump: 3 (node-02)");
  CHECK(obs.back().text ==
        "flight recorder: rank 2 process group 1 \"tp\" collective #7 nccl:all_gather scheduled, input sizes [[4096]], output sizes [[4096]]");
  CHECK(obs.back().line == 7);
}

TEST_CASE("flight recorder: a dump of the wrong shape is refused with a coded reason") {
  CHECK(read_error("hello").rfind("FR005: neither a pickle", 0) == 0);
  CHECK(read_error("[1, 2]").rfind("FR005", 0) == 0);
  CHECK(read_error("{\"entries\": 3}").find("FR003: the dump's 'entries' is 3, not a list") == 0);
  CHECK(read_error("{\"entries\": [{\"state\": \"stuck\"}]}").find("FR003: entry 0: 'state'") == 0);
  CHECK(read_error("{\"entries\": [{\"collective_seq_id\": \"x\"}]}").find("not an integer") != std::string::npos);
  CHECK(read_error("{\"pg_config\": {\"0\": 5}}").find("FR003: pg_config group '0'") == 0);
  CHECK(read_error("{\"entries\": [{\"process_group\": \"0\"}]}").find("a (name, desc) pair") != std::string::npos);
  CHECK(read_error("{\"a\": 1,").rfind("FR005: not valid JSON", 0) == 0);
  // A pickle that is not a dict at the top.
  CHECK(read_error(std::string("\x80\x02K\x05.", 5)).rfind("FR004", 0) == 0);
  // A list that holds itself cannot be written out: refused, not a crash.
  CHECK(read_error(std::string("\x80\x02]q\x00h\x00" "a.", 9)).rfind("FR001", 0) == 0);
}

TEST_CASE("flight recorder: older releases' keys (seq_id, no is_p2p, pg_config as rank lists)") {
  FlightRecorderDump d;
  std::string error;
  REQUIRE(read_flight_recorder_dump(
      R"({"version": "2.0", "pg_config": {"0": [0, 1]}, "entries": [{"pg_id": 0, "process_group": ["0", ""], "seq_id": 9,
          "profiling_name": "nccl:recv 1<-0", "state": "scheduled"}]})",
      1, "n", "f", d, error));
  REQUIRE(d.entries.size() == 1);
  CHECK(d.entries[0].collective_seq_id == 9);
  CHECK(d.entries[0].is_p2p);
  CHECK(d.groups[0].ranks == std::vector<int64_t>{0, 1});
}
