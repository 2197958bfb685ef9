// The command collector (`collectors.command`, a one-file connector):
// configured from YAML through the registry like every connector, built by
// make_pipeline, and collecting what the program writes per node.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

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
