// The command collector (`collectors.command`, docs/blueprint-config.md):
// evidence a site's own program fetches, for the places no other collector
// reaches (a BMC's event log over IPMI or Redfish, a switch's log, a vendor
// tool's dump). For each attempt it runs the configured program, without a
// shell, in a fresh private directory named by CULPRIT_OUTPUT_DIR, with the
// attempt in the environment:
//   CULPRIT_ATTEMPT    the attempt key        CULPRIT_JOB_ID   the workload id
//   CULPRIT_CLUSTER    its cluster            CULPRIT_NODES    node names, comma-separated
//   CULPRIT_START, CULPRIT_END  the scope to read (RFC 3339; "" when unbounded)
// The program writes one file per node, named as the node; each line of it
// becomes an observation of that node and the configured source (the
// scanner reads its timestamp as it does a log file's). Files not named as
// one of the attempt's nodes are listed as ignored. The directory is
// removed before collect() returns.
//
// The report ("command") says "failed" when the program could not start,
// timed out or exited non-zero (what it wrote is still used), "partial"
// when `max_bytes` cut the evidence, "empty" when it wrote nothing.
//
// This connector is one file: its configuration, reader and factory are
// here and it is registered in connectors.cpp (docs/architecture.md,
// "Adding a connector"). Thread-safety: immutable; collect() may run
// concurrently (each call has its own directory).
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/limits.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "blueprint/config_reader.h"
#include "blueprint/connector.h"
#include "blueprint/process.h"

namespace culprit::blueprint {

namespace fs = std::filesystem;

namespace {

struct CommandCollectorConfig : ConnectorConfig {
  std::vector<std::string> run;             // the program and its arguments (a name is looked up in PATH)
  std::string source = "command";           // the log source its lines feed
  int64_t timeout = 60LL * 1000000000;      // a run that takes longer is killed
  uint64_t max_bytes = 64ULL << 20;         // evidence kept per attempt
  std::string summary() const override;
};

class CommandCollector final : public Collector {
 public:
  explicit CommandCollector(CommandCollectorConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "command"; }
  void collect(const CollectRequest& req, Collected& out) const override;

 private:
  // Reads one node's file into observations, up to `budget` bytes; false
  // when the budget cut it.
  bool read_node_file(const fs::path& file, const std::string& node, uint64_t& budget, Collected& out,
                      CollectorReport& rep) const;

  CommandCollectorConfig config_;
};

std::string scope_text(const std::optional<int64_t>& t) { return t ? format_rfc3339(*t) : ""; }

void CommandCollector::collect(const CollectRequest& req, Collected& out) const {
  const Attempt& a = *req.attempt;
  CollectorReport rep;
  rep.collector = "command";
  rep.source = config_.source;
  rep.nodes_expected = a.context.nodes;
  std::sort(rep.nodes_expected.begin(), rep.nodes_expected.end());
  if (req.stop && req.stop->load()) {
    rep.status = "partial";
    rep.reason = "stopped before the command ran";
    out.collectors.push_back(std::move(rep));
    return;
  }
  // mkdtemp: a directory only this user can read, fresh for each attempt,
  // so concurrent attempts never see each other's files.
  std::error_code ec;
  std::string tmpl = (fs::temp_directory_path(ec) / "culprit-command-XXXXXX").string();
  if (ec || !mkdtemp(tmpl.data())) {
    rep.status = "failed";
    rep.reason = "cannot create its output directory";
    out.collectors.push_back(std::move(rep));
    return;
  }
  const fs::path dir = tmpl;
  std::map<std::string, std::string> env = {{"CULPRIT_OUTPUT_DIR", dir.string()},
                                            {"CULPRIT_ATTEMPT", a.key},
                                            {"CULPRIT_JOB_ID", a.context.workload_id},
                                            {"CULPRIT_CLUSTER", a.cluster},
                                            {"CULPRIT_NODES", fmt::format("{}", fmt::join(a.context.nodes, ","))},
                                            {"CULPRIT_START", scope_text(req.scope_start)},
                                            {"CULPRIT_END", scope_text(req.scope_end)}};
  ProcessResult result;
  std::string err;
  if (!run_process(config_.run, env, config_.timeout, result, err)) {
    rep.status = "failed";
    rep.reason = fmt::format("cannot run {}: {}", config_.run[0], err);
  } else if (result.timed_out) {
    rep.status = "failed";
    rep.reason = fmt::format("{} did not finish within {}", config_.run[0], format_duration(config_.timeout));
  } else if (result.exit_status != 0) {
    rep.status = "failed";
    std::string first = result.err.substr(0, result.err.find('\n'));
    rep.reason = fmt::format("{} {}{}", config_.run[0],
                             result.signal ? fmt::format("was killed by signal {}", result.signal)
                                           : fmt::format("exited with status {}", result.exit_status),
                             first.empty() ? "" : ": " + truncate_utf8(first, 200));
  }
  // What it wrote is used even when it failed: a partial dump still helps.
  std::set<std::string> nodes(a.context.nodes.begin(), a.context.nodes.end());
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  uint64_t budget = config_.max_bytes;
  bool cut = false;
  for (const auto& f : files) {
    std::string node = f.filename().string();
    // Not followed: a link could point anywhere this user can read.
    if (!nodes.count(node) || !fs::is_regular_file(fs::symlink_status(f, ec))) {
      out.ignored_files.push_back(fmt::format("command:{}", node));
      continue;
    }
    if (!read_node_file(f, node, budget, out, rep)) cut = true;
  }
  fs::remove_all(dir, ec);
  if (rep.status == "ok" && cut) {
    rep.status = "partial";
    rep.reason = fmt::format("max_bytes ({} bytes) reached", config_.max_bytes);
  } else if (rep.status == "ok" && rep.observations == 0) {
    rep.status = "empty";
    rep.reason = "the command wrote no lines for the attempt's nodes";
  }
  out.bytes += rep.bytes;
  out.collectors.push_back(std::move(rep));
}

bool CommandCollector::read_node_file(const fs::path& file, const std::string& node, uint64_t& budget, Collected& out,
                                      CollectorReport& rep) const {
  // Read in blocks, not with getline: one line of gigabytes (a program gone
  // wrong) must cost no more memory than limits::kLogLine, and reading stops
  // as soon as the attempt's budget is spent.
  std::ifstream in(file, std::ios::binary);
  std::string line;
  bool overlong = false;  // the rest of the current line is dropped
  int64_t number = 0, offset = 0, line_start = 0;
  bool covered = false;
  auto emit = [&]() -> bool {
    ++number;
    if (line.size() > budget) return false;
    budget -= line.size();
    Observation o;
    o.host = node;
    o.source = config_.source;
    o.file = "command:" + node;
    o.line = number;
    o.offset = line_start;
    o.text = std::move(line);
    line.clear();
    rep.bytes += static_cast<int64_t>(o.text.size());
    ++rep.observations;
    out.observations.push_back(std::move(o));
    if (!covered) {
      rep.nodes_covered.insert(std::upper_bound(rep.nodes_covered.begin(), rep.nodes_covered.end(), node), node);
      covered = true;
    }
    return true;
  };
  std::vector<char> block(1 << 16);
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    size_t n = static_cast<size_t>(in.gcount());
    for (size_t i = 0; i < n; ++i) {
      char c = block[i];
      ++offset;
      if (c == '\n') {
        if (!emit()) return false;
        overlong = false;
        line_start = offset;
      } else if (!overlong) {
        line.push_back(c);
        if (line.size() >= limits::kLogLine) overlong = true;
      }
    }
  }
  if (!line.empty() && !emit()) return false;
  return true;
}

}  // namespace

// Configuration: the `collectors.command` section.

std::string CommandCollectorConfig::summary() const {
  return run.empty() ? std::string() : run.front();
}

std::shared_ptr<ConnectorConfig> read_command_collector_config(ConfigReader& r, const YAML::Node& n) {
  auto config = std::make_shared<CommandCollectorConfig>();
  CommandCollectorConfig& out = *config;
  r.require(n, "collectors.command", {"run"});
  r.map(n, "collectors.command", {"run", "source", "timeout", "max_bytes"}, [&](const std::string& k, const YAML::Node& v) {
    if (k == "run") {
      // A program named by a path is relative to the configuration's directory.
      if (r.strings(v, k, out.run) && out.run[0].find('/') != std::string::npos) out.run[0] = r.path(out.run[0]);
    } else if (k == "source") {
      if (r.string(v, k, out.source) && !source_name_ok(out.source))
        r.error("B0104", v, "'source' must be a lowercase name ([a-z0-9_-]+), such as bmc or switch");
    } else if (k == "timeout") r.duration(v, k, out.timeout, 1000000000LL);
    else if (k == "max_bytes") r.byte_size(v, k, out.max_bytes);
  });
  return config;
}

bool make_command_collector(const ConnectorConfig& config, const ConnectorEnv&, ConnectorParts& out, std::string&) {
  const auto& c = static_cast<const CommandCollectorConfig&>(config);
  if (!c.run.empty()) out.collector = std::make_unique<CommandCollector>(c);
  return true;
}

}  // namespace culprit::blueprint
