// blueprint/attempt_codec.h: a queued attempt reads back equal to the one
// discovered, and a document it did not write is refused.
#include "blueprint/attempt_codec.h"

#include <doctest/doctest.h>

using namespace culprit;
using namespace culprit::blueprint;

namespace {

Attempt full_attempt() {
  Attempt a;
  a.key = "slurm/c1/42@1700000000";
  a.cluster = "c1";
  a.context.workload_id = "42";
  a.context.scheduler = "slurm";
  a.context.start = 1700000000000000000;
  a.context.end = 1700000360000000000;
  a.context.nodes = {"node-01", "node-02"};
  a.context.aliases["node-01"] = {"10.0.0.1", "node-01.example"};
  a.context.ranks = {{0, 7, "node-01"}, {8, 15, "node-02"}};
  a.context.tasks = {{0, 0, "node-01"}, {1, 1, "node-02"}};
  a.context.terminal.state = "FAILED";
  a.context.terminal.exit_code = 1;
  a.job_id = "42";
  a.name = "train";
  a.user = "alice";
  a.partition = "gpu";
  a.attempt = 2;
  a.submit = 1699999990000000000;
  a.evidence_after = 1699999995000000000;
  a.work_dir = "/home/alice/run";
  AttemptStep st;
  st.id = "0";
  st.name = "python";
  st.state = "FAILED";
  st.exit_code = 1;
  st.signal = 0;
  st.start = 1700000001000000000;
  st.end = 1700000359000000000;
  st.nodes = {"node-01", "node-02"};
  a.steps.push_back(st);
  a.kubernetes.namespace_name = "team";
  a.kubernetes.workload = "job-x";
  a.kubernetes.workload_uid = "uid-1";
  a.kubernetes.owner_kind = "JobSet";
  a.kubernetes.owner_name = "x";
  a.kubernetes.owner_uid = "uid-2";
  AttemptPod pod;
  pod.name = "x-0";
  pod.uid = "p1";
  pod.node = "node-01";
  pod.phase = "gone";
  pod.gone = true;
  pod.containers = {{"init", true, 0, true}, {"trainer", false, 3, true}};
  a.kubernetes.pods.push_back(pod);
  return a;
}

}  // namespace

TEST_CASE("attempt codec: every field reads back") {
  Attempt a = full_attempt();
  std::string text = attempt_to_json(a).dump();
  Attempt b;
  std::string err;
  REQUIRE(attempt_from_json(text, b, err));
  CHECK(attempt_to_json(b).dump() == text);
  CHECK(b.key == a.key);
  CHECK(b.context.end == a.context.end);
  CHECK(b.context.aliases == a.context.aliases);
  REQUIRE(b.context.ranks.size() == 2);
  CHECK(b.context.ranks[1].first == 8);
  CHECK(b.context.ranks[1].node == "node-02");
  CHECK(b.context.terminal.exit_code == 1);
  CHECK(b.evidence_after == a.evidence_after);
  REQUIRE(b.steps.size() == 1);
  CHECK(b.steps[0].signal == 0);
  REQUIRE(b.kubernetes.pods.size() == 1);
  CHECK(b.kubernetes.pods[0].containers[1].restarts == 3);
  CHECK(b.kubernetes.pods[0].gone);
}

TEST_CASE("attempt codec: an attempt with nothing optional") {
  Attempt a;
  a.key = "static/one";
  a.context.workload_id = "one";
  a.context.nodes = {"n1"};
  a.bundle_dir = "/data/bundles/one";
  Attempt b;
  std::string err;
  REQUIRE(attempt_from_json(attempt_to_json(a).dump(), b, err));
  CHECK(b.bundle_dir == a.bundle_dir);
  CHECK_FALSE(b.context.start);
  CHECK_FALSE(b.submit);
  CHECK(b.steps.empty());
}

TEST_CASE("attempt codec: documents it did not write are refused") {
  Attempt b;
  std::string err;
  CHECK_FALSE(attempt_from_json("not json", b, err));
  CHECK(err.find("queued attempt") == 0);
  CHECK_FALSE(attempt_from_json(R"({"v": 2, "key": "x"})", b, err));
  CHECK(err.find("another culprit version") != std::string::npos);
  std::string text = attempt_to_json(full_attempt()).dump();
  // A member of the wrong type: refused whole, with why.
  std::string bad = text;
  bad.replace(bad.find("\"attempt\":2"), 11, "\"attempt\":\"two\"");
  CHECK_FALSE(attempt_from_json(bad, b, err));
  CHECK(err.find("malformed") != std::string::npos);
  // A context the service would refuse is refused here too.
  bad = text;
  bad.replace(bad.find("\"scheduler\":\"slurm\""), 19, "\"schedulr\":\"slurm\"");
  CHECK_FALSE(attempt_from_json(bad, b, err));
  CHECK(err.find("slurm/c1/42@1700000000") != std::string::npos);
}
