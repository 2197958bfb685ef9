// The blueprint's configuration: every problem is a coded diagnostic with
// file:line:col, unknown keys name their nearest neighbour, secrets are
// refused in the file, relative paths follow the file.
#include "blueprint/config.h"
#include "blueprint/collect/files_collector.h"
#include "blueprint/discovery/slurm_discovery.h"
#include "blueprint/discovery/static_discovery.h"
#include "base/operator_file.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>

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
  CHECK(out.find("/etc/culprit/config.yaml:5:3: error[B0102]: unknown key 'filez' in 'collectors'") != std::string::npos);
  CHECK(out.find("= help: did you mean 'files'?") != std::string::npos);
  CHECK(out.find("  filez: []") != std::string::npos);  // the source line
  CHECK(out.find("^") != std::string::npos);            // and a caret
}

TEST_CASE("config: a key nothing resembles lists the known ones") {
  std::string out = errors_of("discovery:\n  static: {}\nzzzzzz: 1\n");
  CHECK(out.find("3:1: error[B0102]: unknown key 'zzzzzz' in 'the configuration'") != std::string::npos);
  CHECK(out.find("= help: the keys of 'the configuration' are cluster, kubernetes, discovery, collectors") != std::string::npos);
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
  CHECK(out.find("'jobs' is not a valid value for 'attempts'") != std::string::npos);
  CHECK(out.find("= help: did you mean 'job'?") != std::string::npos);
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
  CHECK(errors_of("discovery: {static: {}}\ncluster: a\ncluster: b\n").find("'cluster' is given twice in 'the configuration' (first on line 2)") !=
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
  const auto* statics = cfg.connector<StaticDiscoveryConfig>();
  REQUIRE(statics);
  REQUIRE(statics->bundles.size() == 1);
  CHECK(statics->bundles[0] == (dir.path() / "b1").string());
  REQUIRE(statics->workloads.size() == 1);
  const auto& w = statics->workloads[0];
  CHECK(w.nodes == std::vector<std::string>{"gpu01", "gpu02", "gpu03", "login1"});
  CHECK(w.state == "FAILED");
  CHECK(w.exit_code == 3);
  CHECK(*w.end - *w.start == 3600LL * 1000000000);
  const auto* files = cfg.connector<FilesCollectorConfig>();
  REQUIRE(files);
  REQUIRE(files->sources.size() == 2);
  CHECK(files->sources[0].path == (dir.path() / "logs/{node}/kern.log*").string());
  CHECK(files->sources[1].path == "{work_dir}/slurm-{job_id}.out");  // absolute once filled
  CHECK(cfg.store.url == "sqlite:" + (dir.path() / "state/culprit.db").string());
  CHECK(cfg.watch.interval == 30LL * 1000000000);
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
  CHECK(big.find("error[B0104]: 'nodes': bad hostlist 'n[1-40000]'") != std::string::npos);
  CHECK(big.find("more than 32768 hosts") != std::string::npos);
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

// ------------------------------------------------ hostile and careless input
// Issue 38: durations, YAML edge cases, and the files an operator names.

TEST_CASE("config: a duration out of range is refused, naming the key") {
  // Well formed, but past int64 nanoseconds: once "must be a duration", now out of range.
  std::string out = errors_of("discovery: {static: {}}\nwatch: {interval: 99999999999999999999d}\n");
  CHECK(out.find("2:19: error[B0104]: 'interval' is out of range: at most 3650d (limit duration)") != std::string::npos);
  // Inside int64 (292 years) but an end time plus it is not: once accepted in silence.
  out = errors_of("discovery: {static: {}}\nattribution: {slack_after: 106751d}\n");
  CHECK(out.find("2:28: error[B0104]: 'slack_after' is out of range: at most 3650d") != std::string::npos);
  out = errors_of("discovery: {slurm: {lookback: 3651d}}\n");
  CHECK(out.find("'lookback' is out of range") != std::string::npos);
  BlueprintConfig cfg;
  Diagnostics d;
  CHECK(parse_config("c.yaml", "discovery: {slurm: {lookback: 3650d}}\nattribution: {slack_after: 1d}\n", cfg, d));
  REQUIRE(cfg.connector<SlurmDiscoveryConfig>());
  CHECK(cfg.connector<SlurmDiscoveryConfig>()->lookback == 3650LL * 86400 * 1000000000);
  // Not a duration at all keeps its own message.
  CHECK(errors_of("discovery: {slurm: {lookback: 5 days}}\n").find("'lookback' must be a duration such as 90s") !=
        std::string::npos);
}

TEST_CASE("config: a second YAML document is refused, not dropped") {
  std::string out = errors_of("discovery: {static: {}}\n---\nwatch: {interval: 0s}\n");
  CHECK(out.find("config.yaml:2:1: error[B0101]: a second YAML document ('---'): the file must hold exactly one") !=
        std::string::npos);
  // One document that starts with '---' is one document.
  CHECK(errors_of("---\ndiscovery: {static: {}}\n").empty());
}

TEST_CASE("config: anchors, aliases and merge keys are refused with their position") {
  std::string out = errors_of("nodes: &n [a, b]\ndiscovery: {static: {workloads: [{id: x, nodes: *n}]}}\n");
  CHECK(out.find("1:8: error[B0101]: anchors ('&name') are not supported here") != std::string::npos);
  out = errors_of("discovery: {static: {workloads: [{id: x, nodes: *n}]}}\n");
  CHECK(out.find("error[B0101]: ") != std::string::npos);  // an undefined alias: yaml-cpp's own error
  out = errors_of("discovery:\n  static: {}\nwatch:\n  <<: {interval: 5m}\n");
  CHECK(out.find("4:3: error[B0103]: merge keys ('<<') are not supported in 'watch': write the keys out") !=
        std::string::npos);
}

TEST_CASE("config: a byte-order mark and tabs in the indentation are refused with their position") {
  // yaml-cpp skipped the mark in silence.
  CHECK(errors_of("\xEF\xBB\xBF" "discovery: {static: {}}\n").find("config.yaml:1:1: error[B0101]: the file starts with a byte-order mark") !=
        std::string::npos);
  // yaml-cpp said "illegal map value" here.
  std::string out = errors_of("discovery:\n  static:\n \t bundles: b/\n");
  CHECK(out.find("config.yaml:3:2: error[B0101]: a tab in the indentation: YAML indents with spaces") != std::string::npos);
  // A tab after the indentation, in a value or a comment, is not indentation.
  CHECK(errors_of("discovery: {static: {}}  \t# a comment\ncluster: \"a\tb\"\n").empty());
}

TEST_CASE("config: nesting past config_depth is refused before yaml-cpp recurses") {
  std::string out = errors_of("discovery: " + std::string(100000, '['));
  CHECK(out.find("error[B0101]: limit config_depth exceeded: mappings and lists nested deeper (at most 32)") !=
        std::string::npos);
  std::string block = "discovery:\n";
  for (int i = 0; i < 2000; ++i) block += std::string(2 * i + 2, ' ') + "-\n";
  CHECK(errors_of(block).find("limit config_depth exceeded") != std::string::npos);
}

TEST_CASE("config: empty documents, non-scalars and repeated keys get a clear error") {
  CHECK(errors_of("").find("1:1: error[B0103]: the configuration is empty") != std::string::npos);
  CHECK(errors_of("# only a comment\n").find("the configuration is empty") != std::string::npos);
  CHECK(errors_of("- a\n- b\n").find("1:1: error[B0103]: the configuration must be a mapping") != std::string::npos);
  CHECK(errors_of("discovery: {static: {}}\ncluster: [a, b]\n").find("2:10: error[B0103]: 'cluster' must be a single value") !=
        std::string::npos);
  CHECK(errors_of("discovery: {static: {}}\n? [a]\n: b\n").find("keys of 'the configuration' must be plain names") !=
        std::string::npos);
  // A repeated label value in source_map: yaml-cpp kept the last one in silence.
  std::string out = errors_of(
      "discovery: {static: {}}\n"
      "collectors:\n"
      "  loki:\n"
      "    url: http://127.0.0.1:3100\n"
      "    streams:\n"
      "      - selector: '{job=\"x\"}'\n"
      "        source_label: s\n"
      "        source_map: {syslog: kernel, syslog: app}\n");
  CHECK(out.find("8:38: error[B0108]: 'syslog' is given twice in 'source_map'") != std::string::npos);
}

TEST_CASE("config: node lists are bounded by the context limit and in all") {
  std::string out = errors_of("discovery: {static: {workloads: [{id: a, nodes: \"n[0-40000]\"}]}}\n");
  CHECK(out.find("bad hostlist 'n[0-40000]'") != std::string::npos);
  CHECK(out.find("more than 32768 hosts") != std::string::npos);
  out = errors_of("discovery: {static: {workloads: [{id: a, nodes: [\"a[0-20000]\", \"b[0-20000]\"]}]}}\n");
  CHECK(out.find("limit context_nodes exceeded: 'nodes' lists more nodes (at most 32768)") != std::string::npos);
  std::string many = "discovery: {static: {workloads: [";
  for (int i = 0; i < 40; ++i) many += "{id: w" + std::to_string(i) + ", nodes: \"n[0-29999]\"}, ";
  many += "]}}\n";
  CHECK(errors_of(many).find("limit config_nodes exceeded") != std::string::npos);
}

namespace {

// Runs `read` (which may block on a FIFO when it is wrong) with a deadline;
// if it has not returned by then, opens the FIFO for writing and closes it
// so the reader sees its end, and reports the hang.
template <typename F>
bool returns_quickly(const std::filesystem::path& fifo, F read) {
  auto done = std::async(std::launch::async, read);
  if (done.wait_for(std::chrono::seconds(5)) == std::future_status::ready) return true;
  for (int i = 0; i < 50 && done.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready; ++i) {
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  return false;
}

}  // namespace

TEST_CASE("config: the configuration must be a regular file of at most config_file_bytes") {
  culprit::testing::TempDir dir;
  auto fifo = dir.path() / "config.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  BlueprintConfig cfg;
  Diagnostics d;
  std::string err;
  CHECK(returns_quickly(fifo, [&] { return load_config(fifo.string(), cfg, d, err); }));
  CHECK(err.find("it is a FIFO, not a regular file") != std::string::npos);
  err.clear();
  CHECK_FALSE(load_config(dir.path().string(), cfg, d, err));
  CHECK(err.find("it is a directory, not a regular file") != std::string::npos);
  err.clear();
  auto big = dir.write("big.yaml", "discovery: {static: {}}\n" + std::string(5u << 20, '#') + "\n");
  CHECK_FALSE(load_config(big.string(), cfg, d, err));
  CHECK(err.find("limit config_file_bytes exceeded") != std::string::npos);
  CHECK(d.all().empty());  // not parsed
  err.clear();
  auto ok = dir.write("ok.yaml", "discovery: {static: {}}\n");
  CHECK(load_config(ok.string(), cfg, d, err));
  CHECK(err.empty());
}

TEST_CASE("config: a secret file must be a regular file of at most secret_file_bytes") {
  culprit::testing::TempDir dir;
  auto fifo = dir.path() / "token.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string s, err;
  // It once blocked in open(2) until some process wrote to the FIFO.
  CHECK(returns_quickly(fifo, [&] { return read_secret(fifo.string(), "", s, err); }));
  CHECK(err.find("the secret file " + fifo.string() + ": it is a FIFO, not a regular file") != std::string::npos);
  CHECK_FALSE(read_secret(dir.path().string(), "", s, err));
  CHECK(err.find("it is a directory") != std::string::npos);
  CHECK_FALSE(read_secret("/dev/null", "", s, err));
  CHECK(err.find("it is a character device") != std::string::npos);
  // One line over the cap was read whole (a secret of any size).
  auto big = dir.write("big-token", std::string((64u << 10) + 1, 'x'));
  CHECK_FALSE(read_secret(big.string(), "", s, err));
  CHECK(err.find("limit secret_file_bytes exceeded") != std::string::npos);
  auto fits = dir.write("token", std::string(100, 'y') + "\n" + std::string((64u << 10) - 200, 'z'));
  CHECK(read_secret(fits.string(), "", s, err));
  CHECK(s == std::string(100, 'y'));
}
