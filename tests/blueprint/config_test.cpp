// The blueprint's configuration: every problem is a coded diagnostic with
// file:line:col, unknown keys name their nearest neighbour, secrets are
// refused in the file, relative paths follow the file.
#include "blueprint/config.h"

#include <doctest/doctest.h>

#include "tests/support/test_support.h"

using namespace culprit;
using namespace culprit::blueprint;

namespace {

std::string errors_of(const std::string& text, const std::string& path = "/etc/culprit/config.yaml") {
  BlueprintConfig cfg;
  Diagnostics d;
  parse_config(path, text, cfg, d);
  return d.render(false);
}

}  // namespace

TEST_CASE("config: an unknown key gives file:line:col and the nearest known key") {
  std::string text =
      "discovery:\n"
      "  static:\n"
      "    workloads: []\n"
      "collectors:\n"
      "  filez: []\n";
  std::string out = errors_of(text);
  CHECK(out.find("/etc/culprit/config.yaml:5:3: error[B0102]: unknown key 'filez' (did you mean 'files'?)") != std::string::npos);
  CHECK(out.find("  filez: []") != std::string::npos);  // the source line
  CHECK(out.find("^") != std::string::npos);            // and a caret
}

TEST_CASE("config: a key nothing resembles lists the known ones") {
  std::string out = errors_of("discovery:\n  static: {}\nzzzzzz: 1\n");
  CHECK(out.find("3:1: error[B0102]: unknown key 'zzzzzz' in 'the configuration' (known: cluster, kubernetes, discovery, collectors") != std::string::npos);
}

TEST_CASE("config: wrong types, bad values and missing keys are all reported, not only the first") {
  std::string text =
      "discovery:\n"
      "  slurm:\n"
      "    lookback: soon\n"
      "    states: [FAILED, TIMEOT]\n"
      "    attempts: jobs\n"
      "collectors:\n"
      "  files:\n"
      "    - source: Kernel\n"
      "      path: /var/log/{nodes}/kern.log\n"
      "    - path: /var/log/slurmctld.log\n"
      "watch:\n"
      "  interval: 0s\n";
  std::string out = errors_of(text);
  CHECK(out.find("3:15: error[B0104]: 'lookback' must be a duration") != std::string::npos);
  CHECK(out.find("unknown terminal state 'TIMEOT' (did you mean 'TIMEOUT'?)") != std::string::npos);
  CHECK(out.find("'attempts' must be one of job, step (did you mean 'job'?)") != std::string::npos);
  CHECK(out.find("'source' must be a lowercase name") != std::string::npos);
  CHECK(out.find("unknown placeholder '{nodes}'") != std::string::npos);
  CHECK(out.find("did you mean '{node}'?") != std::string::npos);
  CHECK(out.find("'collectors.files[]' needs the key 'source'") != std::string::npos);
  CHECK(out.find("a 'path' without {node} needs 'host'") != std::string::npos);
  CHECK(out.find("12:13: error[B0104]: 'interval' must be a duration") != std::string::npos);
}

TEST_CASE("config: YAML syntax errors have a position") {
  std::string out = errors_of("discovery:\n  static: [unclosed\n");
  CHECK(out.find("error[B0101]: not valid YAML") != std::string::npos);
  CHECK(out.find("config.yaml:3:") != std::string::npos);
}

TEST_CASE("config: secrets are never taken from the file") {
  CHECK(errors_of("discovery: {static: {}}\nstore: postgresql://u:secret@db/culprit\n").find("B0106") != std::string::npos);
  CHECK(errors_of("discovery: {static: {}}\nstore: {url: postgresql://u@db/c, password: x}\n").find("B0106") != std::string::npos);
  CHECK(errors_of("discovery: {static: {}}\nattribution: {service: {url: http://h:1, token: abc}}\n").find("B0106") !=
        std::string::npos);
  CHECK(errors_of("discovery: {static: {}}\nstore: postgresql://u@db/c\n").empty());
}

TEST_CASE("config: repeated keys and an empty discovery are errors") {
  CHECK(errors_of("discovery: {static: {}}\ncluster: a\ncluster: b\n").find("key 'cluster' is given twice (first on line 2)") !=
        std::string::npos);
  CHECK(errors_of("cluster: a\n").find("nothing to discover") != std::string::npos);
}

TEST_CASE("config: values, hostlists and paths relative to the file") {
  culprit::testing::TempDir dir;
  dir.write("b1/context.json", "{}");
  std::string text =
      "cluster: c1\n"
      "discovery:\n"
      "  static:\n"
      "    bundles: \"b*/\"\n"
      "    workloads:\n"
      "      - id: w1\n"
      "        start: 2026-03-14T01:00:00Z\n"
      "        end: 2026-03-14T02:00:00Z\n"
      "        nodes: [\"gpu[01-03]\", gpu02, login1]\n"
      "        state: failed\n"
      "        exit_code: 3\n"
      "collectors:\n"
      "  files:\n"
      "    - {source: kernel, path: \"logs/{node}/kern.log*\"}\n"
      "    - {source: app, path: \"{work_dir}/slurm-{job_id}.out\", host: \"{batch_node}\"}\n"
      "store: sqlite:state/culprit.db\n"
      "watch: {interval: 30s, overlap: 5m}\n";
  BlueprintConfig cfg;
  Diagnostics d;
  REQUIRE_MESSAGE(parse_config((dir.path() / "c.yaml").string(), text, cfg, d), d.render());
  CHECK(cfg.cluster == "c1");
  REQUIRE(cfg.static_discovery.bundles.size() == 1);
  CHECK(cfg.static_discovery.bundles[0] == (dir.path() / "b1").string());
  REQUIRE(cfg.static_discovery.workloads.size() == 1);
  const auto& w = cfg.static_discovery.workloads[0];
  CHECK(w.nodes == std::vector<std::string>{"gpu01", "gpu02", "gpu03", "login1"});
  CHECK(w.state == "FAILED");
  CHECK(w.exit_code == 3);
  CHECK(*w.end - *w.start == 3600LL * 1000000000);
  REQUIRE(cfg.files.sources.size() == 2);
  CHECK(cfg.files.sources[0].path == (dir.path() / "logs/{node}/kern.log*").string());
  CHECK(cfg.files.sources[1].path == "{work_dir}/slurm-{job_id}.out");  // absolute once filled
  CHECK(cfg.store.url == "sqlite:" + (dir.path() / "state/culprit.db").string());
  CHECK(cfg.watch.interval == 30LL * 1000000000);
}

TEST_CASE("config: nearest_name") {
  CHECK(nearest_name("lokii", {"loki", "files"}) == "loki");
  CHECK(nearest_name("stor", {"store", "static"}) == "store");
  CHECK(nearest_name("xyzzy", {"store", "static"}) == "");
}

TEST_CASE("config: read_secret takes the file's first line, or the variable") {
  culprit::testing::TempDir dir;
  auto f = dir.write("token", "s3cret  \nsecond line\n");
  std::string s, err;
  CHECK(read_secret(f.string(), "", s, err));
  CHECK(s == "s3cret");
  setenv("CULPRIT_TEST_SECRET", "from-env", 1);
  CHECK(read_secret("", "CULPRIT_TEST_SECRET", s, err));
  CHECK(s == "from-env");
  CHECK_FALSE(read_secret("", "CULPRIT_TEST_SECRET_UNSET", s, err));
  CHECK(err.find("not set") != std::string::npos);
  dir.write("empty", "\n");
  CHECK_FALSE(read_secret((dir.path() / "empty").string(), "", s, err));
}

TEST_CASE("config: static workloads keep the context's node-name rule and node limit (issue 38)") {
  auto workload = [](const std::string& nodes) {
    return "discovery:\n  static:\n    workloads:\n      - id: a\n        nodes: " + nodes + "\n";
  };
  // A name that is not a host name: it would fill {node} and the drain command.
  for (const char* bad : {"\"../etc\"", "\"n$(id)\"", "\"-n\"", "[ok-1, \"a/b\"]"}) {
    std::string out = errors_of(workload(bad));
    INFO(bad, " -> ", out);
    CHECK(out.find("5:16: error[B0104]: 'nodes': invalid node name") != std::string::npos);
  }
  std::string ctl = errors_of(workload("[\"n\\x1b(0t\\x07\"]"));
  CHECK(ctl.find("invalid node name 'n\\x1b(0t\\x07'") != std::string::npos);  // quoted escaped, never raw
  CHECK(ctl.find('\x1b') == std::string::npos);
  // More nodes than a context may list.
  std::string big = errors_of(workload("\"n[1-40000]\""));
  CHECK(big.find("error[B0104]: 'nodes': limit context_nodes exceeded: the attempt has 40000 nodes (at most 32768)") !=
        std::string::npos);
  CHECK(errors_of(workload("\"n[1-32768]\"")).empty());
  CHECK(errors_of(workload("[node-01, gpu_02.cluster.local]")).empty());
}

TEST_CASE("config: a files entry's host is a host name or {batch_node}") {
  std::string base = "discovery:\n  static:\n    workloads: [{id: a, nodes: [n1]}]\ncollectors:\n  files:\n";
  CHECK(errors_of(base + "    - {source: ctl, path: /var/log/x.log, host: slurmctld-01}\n").empty());
  CHECK(errors_of(base + "    - {source: app, path: /w/x.log, host: \"{batch_node}\"}\n").empty());
  std::string out = errors_of(base + "    - {source: ctl, path: /var/log/x.log, host: \"a/../b\"}\n");
  CHECK(out.find("error[B0104]: 'host' must be a host name") != std::string::npos);
}
