// Parsing `sacct -P -D` output: the records below were printed by Slurm
// 22.05.8 (check_slurm.sh's cluster) with kSacctFields, '|' shown in place
// of the unit-separator delimiter; array and multi-node records follow the
// same shapes.
#include "blueprint/discovery/slurm_discovery.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include "base/timestamp.h"

using namespace culprit;
using namespace culprit::blueprint;

namespace {

const char* kRecorded =
    "1|1|oom|debug|root|testcluster|FAILED|3:0|2026-12-01T10:00:56|2026-12-01T10:00:56|2026-12-01T10:00:56|node1|/tmp/w\n"
    "1.batch|1.batch|batch|||testcluster|FAILED|3:0|2026-12-01T10:00:56|2026-12-01T10:00:56|2026-12-01T10:00:56|node1|\n"
    "2|2|nodefail|debug|root|testcluster|NODE_FAIL|0:0|2026-12-01T10:00:58|2026-12-01T10:00:59|2026-12-01T10:01:00|node1|/tmp/w\n"
    "2.batch|2.batch|batch|||testcluster|CANCELLED||2026-12-01T10:00:59|2026-12-01T10:00:59|2026-12-01T10:01:00|node1|\n"
    "3|3|requeue|debug|root|testcluster|NODE_FAIL|0:0|2026-12-01T10:00:58|2026-12-01T10:00:59|2026-12-01T10:01:00|node1|/tmp/w\n"
    "3.batch|3.batch|batch|||testcluster|CANCELLED||2026-12-01T10:00:59|2026-12-01T10:00:59|2026-12-01T10:01:00|node1|\n"
    "3|3|requeue|debug|root|testcluster|FAILED|2:0|2026-12-01T10:01:00|2026-12-01T10:01:24|2026-12-01T10:01:24|node1|/tmp/w\n"
    "3.batch|3.batch|batch|||testcluster|FAILED|2:0|2026-12-01T10:01:24|2026-12-01T10:01:24|2026-12-01T10:01:24|node1|\n"
    "4|4|cancelled|debug|root|testcluster|CANCELLED by 0|0:15|2026-12-01T10:01:24|2026-12-01T10:01:24|2026-12-01T10:01:24|node1|/tmp/w\n"
    "5|5|timeout|debug|root|testcluster|TIMEOUT|0:0|2026-12-01T10:01:27|2026-12-01T10:01:27|2026-12-01T10:02:53|node1|/tmp/w\n"
    "5.batch|5.batch|batch|||testcluster|CANCELLED|0:15|2026-12-01T10:01:27|2026-12-01T10:01:27|2026-12-01T10:02:54|node1|\n"
    "6|6|ok|debug|root|testcluster|COMPLETED|0:0|2026-12-01T10:03:00|2026-12-01T10:03:00|2026-12-01T10:03:01|node1|/tmp/w\n"
    "7|7|running|debug|root|testcluster|RUNNING|0:0|2026-12-01T10:03:00|2026-12-01T10:03:00|Unknown|node1|/tmp/w\n"
    "8|8|never|debug|root|testcluster|CANCELLED by 0|0:0|2026-12-01T10:03:00|None|2026-12-01T10:03:05|None assigned|/tmp/w\n"
    "9_[2-5]|9|arr|debug|root|testcluster|PENDING|0:0|2026-12-01T10:03:00|Unknown|Unknown|None assigned|/tmp/w\n"
    "9_1|10|arr|debug|alice|testcluster|FAILED|1:0|2026-12-01T10:03:00|2026-12-01T10:03:01|2026-12-01T10:04:00|gpu[001-002,010]|/home/a\n"
    "9_1.0|10.0|python|||testcluster|FAILED|1:0|2026-12-01T10:03:02|2026-12-01T10:03:02|2026-12-01T10:03:59|gpu[001-002]|\n"
    "9_1.1|10.1|python|||testcluster|OUT_OF_MEMORY|0:125|2026-12-01T10:03:02|2026-12-01T10:03:02|2026-12-01T10:03:30|gpu010|\n";

std::string with_delimiter(std::string s) {
  for (auto& c : s)
    if (c == '|') c = kSacctDelimiter[0];
  return s;
}

int64_t t(const char* s) { return *parse_rfc3339(s); }

}  // namespace

TEST_CASE("sacct: states, exit codes, nodes, windows; requeued runs are attempts of their own") {
  SlurmDiscoveryConfig cfg;
  DiscoveryResult r;
  parse_sacct(with_delimiter(kRecorded), cfg, {}, r);
  CHECK(r.warnings.empty());
  REQUIRE(r.attempts.size() == 7);
  std::map<std::string, Attempt> by;
  for (const auto& a : r.attempts) by[a.key] = a;
  const Attempt& fail = by.at("slurm/testcluster/1@1796119256");
  CHECK(fail.context.terminal.state == "FAILED");
  CHECK(fail.context.terminal.exit_code == 3);
  CHECK(fail.context.nodes == std::vector<std::string>{"node1"});
  CHECK(fail.work_dir == "/tmp/w");
  CHECK(fail.job_id == "1");
  REQUIRE(fail.steps.size() == 1);
  CHECK(fail.steps[0].id == "batch");

  const Attempt& run1 = by.at("slurm/testcluster/3@1796119259");
  const Attempt& run2 = by.at("slurm/testcluster/3@1796119284");
  CHECK(run1.context.terminal.state == "NODE_FAIL");
  CHECK(run1.attempt == 1);
  CHECK(run2.context.terminal.state == "FAILED");
  CHECK(run2.attempt == 2);
  CHECK(run2.context.terminal.exit_code == 2);
  CHECK(run2.steps.size() == 1);  // each run keeps its own steps
  CHECK(run2.evidence_after == t("2026-12-01T10:01:01Z"));  // the second after run 1 ended
  CHECK_FALSE(run1.evidence_after);

  const Attempt& cancelled = by.at("slurm/testcluster/4@1796119284");
  CHECK(cancelled.context.terminal.state == "CANCELLED");       // " by 0" dropped
  CHECK(cancelled.context.terminal.exit_code == 128 + 15);      // killed by SIGTERM
  const Attempt& to = by.at("slurm/testcluster/5@1796119287");
  CHECK(to.context.terminal.state == "TIMEOUT");
  CHECK(*to.context.end - *to.context.start == 86LL * 1000000000);

  const Attempt& task = by.at("slurm/testcluster/10@1796119381");
  CHECK(task.context.workload_id == "9_1");
  CHECK(task.job_id == "10");
  CHECK(task.user == "alice");
  CHECK(task.context.nodes == std::vector<std::string>{"gpu001", "gpu002", "gpu010"});
  // Ignored: COMPLETED (not a configured state), RUNNING (no end), the job
  // that never ran, the pending array range.
  CHECK(r.ignored == 4);
}

TEST_CASE("sacct: the window selects by end time") {
  SlurmDiscoveryConfig cfg;
  DiscoveryResult r;
  parse_sacct(with_delimiter(kRecorded), cfg, {t("2026-12-01T10:01:10Z"), t("2026-12-01T10:03:00Z")}, r);
  std::vector<std::string> keys;
  for (const auto& a : r.attempts) keys.push_back(a.key);
  CHECK(keys == std::vector<std::string>{"slurm/testcluster/3@1796119284", "slurm/testcluster/4@1796119284",
                                         "slurm/testcluster/5@1796119287"});
}

TEST_CASE("sacct: step attempts and configured states") {
  SlurmDiscoveryConfig cfg;
  cfg.step_attempts = true;
  cfg.states = {"OUT_OF_MEMORY"};
  DiscoveryResult r;
  parse_sacct(with_delimiter(kRecorded), cfg, {}, r);
  REQUIRE(r.attempts.size() == 1);
  const Attempt& a = r.attempts[0];
  CHECK(a.key == "slurm/testcluster/10.1@1796119381");
  CHECK(a.context.workload_id == "9_1.1");
  CHECK(a.context.terminal.state == "OUT_OF_MEMORY");
  CHECK(a.context.nodes == std::vector<std::string>{"gpu010"});
  CHECK(a.context.terminal.exit_code == 128 + 125);
}

TEST_CASE("sacct: malformed records are warnings, never fatal") {
  SlurmDiscoveryConfig cfg;
  DiscoveryResult r;
  parse_sacct(with_delimiter("1|1|x\n"
                             "2|2|j|p|u|c|FAILED|1:0|2026-12-01T10:00:00|2026-12-01T10:00:00|2026-12-01T10:00:01|gpu[1-|/w\n"
                             "3.batch|3.batch|batch|||c|FAILED|1:0|x|x|x|n1|\n"),
              cfg, {}, r);
  CHECK(r.attempts.empty());
  INFO(fmt::format("{}", fmt::join(r.warnings, "\n")));
  REQUIRE(r.warnings.size() == 3);
  CHECK(r.warnings[0].find("3 fields instead of 13") != std::string::npos);
  CHECK(r.warnings[1].find("bad node list 'gpu[1-'") != std::string::npos);
  CHECK(r.warnings[2].find("step 3.batch without its job record") != std::string::npos);
}

TEST_CASE("sacct: a node name that breaks the context's rule is never passed on (issue 38)") {
  SlurmDiscoveryConfig cfg;
  DiscoveryResult r;
  std::string text =
      "1|1|x|debug|root|c|FAILED|1:0|2026-12-01T10:00:56|2026-12-01T10:00:56|2026-12-01T10:01:56|node$(id)|/tmp/w\n"
      "1.batch|1.batch|batch|||c|FAILED|1:0|2026-12-01T10:00:56|2026-12-01T10:00:56|2026-12-01T10:01:56|node$(id)|\n"
      "2|2|x|debug|root|c|FAILED|1:0|2026-12-01T10:00:56|2026-12-01T10:00:56|2026-12-01T10:01:56|node1|/tmp/w\n"
      "2.0|2.0|python|||c|FAILED|1:0|2026-12-01T10:00:56|2026-12-01T10:00:56|2026-12-01T10:01:56|../etc|\n"
      "3|3|x|debug|root|c|FAILED|1:0|2026-12-01T10:00:56|2026-12-01T10:00:56|2026-12-01T10:01:56|n[1-40000]|/tmp/w\n";
  parse_sacct(with_delimiter(text), cfg, {}, r);
  REQUIRE(r.attempts.size() == 1);
  CHECK(r.attempts[0].context.workload_id == "2");
  CHECK(r.attempts[0].context.nodes == std::vector<std::string>{"node1"});
  REQUIRE(r.attempts[0].steps.size() == 1);
  CHECK(r.attempts[0].steps[0].nodes.empty());  // the step's bad list is dropped, never used
  INFO(fmt::format("{}", fmt::join(r.warnings, "\n")));
  REQUIRE(r.warnings.size() == 3);
  CHECK(r.warnings[0].find("sacct line 1: job 1 skipped: invalid node name 'node$(id)'") == 0);
  CHECK(r.warnings[1].find("sacct line 4: step 2.0: nodes not used: invalid node name '../etc'") == 0);
  CHECK(r.warnings[2].find("sacct line 5: job 3 skipped: limit context_nodes exceeded") == 0);

  // Step attempts: a step whose nodes were refused is no attempt.
  cfg.step_attempts = true;
  DiscoveryResult s;
  parse_sacct(with_delimiter(text), cfg, {}, s);
  CHECK(s.attempts.empty());
}
