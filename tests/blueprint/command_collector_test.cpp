// The command collector (`collectors.command`, a one-file connector):
// configured from YAML through the registry like every connector, built by
// make_pipeline, and collecting what the program writes per node.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "base/limits.h"
#include "blueprint/config.h"
#include "blueprint/runner.h"
#include "tests/support/test_support.h"

using namespace culprit;
using namespace culprit::blueprint;

namespace {

const char* kDiscovery =
    "discovery:\n"
    "  static:\n"
    "    workloads: [{id: w1, nodes: [\"n[1-2]\"], state: failed}]\n";

// The collector `config` builds (null if none), with diagnostics checked.
std::unique_ptr<Collector> build(const culprit::testing::TempDir& dir, const std::string& collectors, BlueprintConfig& cfg) {
  Diagnostics d;
  REQUIRE_MESSAGE(parse_config((dir.path() / "c.yaml").string(), std::string(kDiscovery) + collectors, cfg, d), d.render(false));
  RunSetup setup;
  std::string err;
  REQUIRE_MESSAGE(make_pipeline(cfg, setup, err), err);
  for (auto& c : setup.collectors)
    if (c->name() == "command") return std::move(c);
  return nullptr;
}

// What `c` collects for workload w1 on n1 and n2.
Collected collect(const Collector& c) {
  Attempt a;
  a.key = "static/c1/w1";
  a.cluster = "c1";
  a.context.workload_id = "w1";
  a.context.nodes = {"n1", "n2"};
  CollectRequest req;
  req.attempt = &a;
  Collected out;
  c.collect(req, out);
  return out;
}

}  // namespace

TEST_CASE("command collector: configured from YAML, its per-node files become the node's evidence") {
  culprit::testing::TempDir dir;
  // The program: one file per node, named as the node, plus one that is not a node.
  dir.write("fetch.sh",
            "#!/bin/sh\n"
            "printf '2026-03-14T01:00:00Z sel: %s PSU failure\\n' \"$CULPRIT_JOB_ID\" > \"$CULPRIT_OUTPUT_DIR/n1\"\n"
            "printf 'line one\\nline two\\n' > \"$CULPRIT_OUTPUT_DIR/n2\"\n"
            "echo stray > \"$CULPRIT_OUTPUT_DIR/summary\"\n");
  std::filesystem::permissions(dir.path() / "fetch.sh", std::filesystem::perms::owner_all);
  BlueprintConfig cfg;
  // A program named by a path is relative to the configuration's directory.
  auto c = build(dir,
                 "collectors:\n"
                 "  command:\n"
                 "    run: [./fetch.sh]\n"
                 "    source: bmc\n"
                 "    timeout: 10s\n",
                 cfg);
  REQUIRE(c);
  Collected out = collect(*c);
  REQUIRE(out.observations.size() == 3);
  CHECK(out.observations[0].host == "n1");
  CHECK(out.observations[0].source == "bmc");
  CHECK(out.observations[0].text == "2026-03-14T01:00:00Z sel: w1 PSU failure");
  CHECK(out.observations[0].file == "command:n1");
  CHECK(out.observations[2].host == "n2");
  CHECK(out.observations[2].line == 2);
  CHECK(out.observations[2].offset == 9);
  CHECK(out.ignored_files == std::vector<std::string>{"command:summary"});
  REQUIRE(out.collectors.size() == 1);
  CHECK(out.collectors[0].collector == "command");
  CHECK(out.collectors[0].status == "ok");
  CHECK(out.collectors[0].nodes_covered == std::vector<std::string>{"n1", "n2"});
  CHECK(out.collectors[0].observations == 3);
}

TEST_CASE("command collector: a failing program is reported, what it wrote is kept") {
  culprit::testing::TempDir dir;
  BlueprintConfig cfg;
  auto c = build(dir,
                 "collectors:\n"
                 "  command:\n"
                 "    run: [sh, -c, 'echo partial > \"$CULPRIT_OUTPUT_DIR/n2\"; echo no BMC >&2; exit 3']\n",
                 cfg);
  REQUIRE(c);
  Collected out = collect(*c);
  REQUIRE(out.collectors.size() == 1);
  CHECK(out.collectors[0].status == "failed");
  CHECK(out.collectors[0].reason == "sh exited with status 3: no BMC");
  CHECK(out.collectors[0].source == "command");
  REQUIRE(out.observations.size() == 1);
  CHECK(out.observations[0].host == "n2");
}

TEST_CASE("command collector: its section is validated like every other") {
  culprit::testing::TempDir dir;
  BlueprintConfig cfg;
  Diagnostics d;
  parse_config((dir.path() / "c.yaml").string(),
               std::string(kDiscovery) + "collectors:\n  command:\n    source: BMC\n    timout: 5s\n", cfg, d);
  std::string out = d.render(false);
  CHECK(out.find("error[B0105]: 'collectors.command' needs the key 'run'") != std::string::npos);
  CHECK(out.find("'source' must be a lowercase name") != std::string::npos);
  CHECK(out.find("unknown key 'timout' in 'collectors.command'") != std::string::npos);
}

TEST_CASE("command collector: an overlong line is cut at kLogLine, and max_bytes stops the reading") {
  culprit::testing::TempDir dir;
  BlueprintConfig cfg;
  // n1: one 3 MiB line then a short one; n2: 200 short lines over a 1 KiB budget.
  auto c = build(dir,
                 "collectors:\n"
                 "  command:\n"
                 "    run: [sh, -c, 'head -c 3145728 /dev/zero | tr \"\\\\0\" x > \"$CULPRIT_OUTPUT_DIR/n1\"; "
                 "printf \"\\\\nafter\\\\n\" >> \"$CULPRIT_OUTPUT_DIR/n1\"; "
                 "i=0; while [ $i -lt 200 ]; do echo line-$i; i=$((i+1)); done > \"$CULPRIT_OUTPUT_DIR/n2\"']\n"
                 "    max_bytes: 1049600\n",
                 cfg);
  REQUIRE(c);
  Collected out = collect(*c);
  REQUIRE(out.observations.size() >= 2);
  CHECK(out.observations[0].host == "n1");
  CHECK(out.observations[0].text.size() == limits::kLogLine);
  CHECK(out.observations[1].text == "after");
  CHECK(out.observations[1].line == 2);
  CHECK(out.observations[1].offset == 3145729);
  // 1 MiB + 1,024 bytes: n1 takes 1 MiB + 5, n2 fits 1,019 bytes of lines.
  size_t n2 = 0;
  for (const auto& o : out.observations) n2 += o.host == "n2";
  CHECK(n2 > 100);
  CHECK(n2 < 200);
  REQUIRE(out.collectors.size() == 1);
  CHECK(out.collectors[0].status == "partial");
}
