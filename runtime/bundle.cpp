#include "runtime/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/timestamp.h"

namespace culprit {
namespace fs = std::filesystem;

bool valid_source_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool valid_host_name(std::string_view s) {
  if (s.empty() || s.size() > 253 || s[0] == '.' || s[0] == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

bool parse_context_json(const std::string& text, WorkloadContext& out, std::string& error) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    error = "context is not valid JSON";
    return false;
  }
  if (!j.is_object()) {
    error = "context must be a JSON object";
    return false;
  }
  static const std::set<std::string> known = {"workload_id", "scheduler", "start", "end", "nodes", "terminal"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!known.count(it.key())) {
      error = fmt::format("context: unknown key '{}' (known: workload_id, scheduler, start, end, nodes, terminal)", it.key());
      return false;
    }
  }
  auto str = [&](const char* key, std::string& dst, bool required) {
    if (!j.contains(key)) {
      if (required) error = fmt::format("context: missing '{}'", key);
      return !required;
    }
    if (!j[key].is_string()) {
      error = fmt::format("context: '{}' must be a string", key);
      return false;
    }
    dst = j[key].get<std::string>();
    return true;
  };
  WorkloadContext c;
  if (!str("workload_id", c.workload_id, true)) return false;
  if (c.workload_id.empty()) {
    error = "context: 'workload_id' must not be empty";
    return false;
  }
  if (!str("scheduler", c.scheduler, false)) return false;
  if (c.scheduler.empty()) c.scheduler = "static";
  if (c.scheduler != "slurm" && c.scheduler != "kubernetes" && c.scheduler != "static") {
    error = fmt::format("context: 'scheduler' must be slurm, kubernetes or static, not '{}'", c.scheduler);
    return false;
  }
  for (const char* key : {"start", "end"}) {
    std::string s;
    if (!str(key, s, false)) return false;
    if (s.empty()) continue;
    auto ns = parse_rfc3339(s);
    if (!ns) {
      error = fmt::format("context: '{}' is not an RFC 3339 time: '{}'", key, s);
      return false;
    }
    (std::string(key) == "start" ? c.start : c.end) = *ns;
  }
  if (c.start && c.end && *c.end < *c.start) {
    error = "context: 'end' is before 'start'";
    return false;
  }
  if (!j.contains("nodes") || !j["nodes"].is_array()) {
    error = "context: 'nodes' must be an array of host names";
    return false;
  }
  for (const auto& n : j["nodes"]) {
    if (!n.is_string() || !valid_host_name(n.get<std::string>())) {
      error = fmt::format("context: invalid node name {}", n.dump());
      return false;
    }
    c.nodes.push_back(n.get<std::string>());
  }
  std::sort(c.nodes.begin(), c.nodes.end());
  c.nodes.erase(std::unique(c.nodes.begin(), c.nodes.end()), c.nodes.end());
  if (j.contains("terminal")) {
    const auto& t = j["terminal"];
    if (!t.is_object()) {
      error = "context: 'terminal' must be an object {state, exit_code}";
      return false;
    }
    for (auto it = t.begin(); it != t.end(); ++it) {
      if (it.key() != "state" && it.key() != "exit_code") {
        error = fmt::format("context: unknown key 'terminal.{}'", it.key());
        return false;
      }
    }
    if (t.contains("state")) {
      if (!t["state"].is_string()) {
        error = "context: 'terminal.state' must be a string";
        return false;
      }
      c.terminal.state = t["state"].get<std::string>();
      std::transform(c.terminal.state.begin(), c.terminal.state.end(), c.terminal.state.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    }
    if (t.contains("exit_code") && !t["exit_code"].is_null()) {
      if (!t["exit_code"].is_number_integer()) {
        error = "context: 'terminal.exit_code' must be an integer";
        return false;
      }
      c.terminal.exit_code = t["exit_code"].get<int64_t>();
    }
  }
  out = std::move(c);
  return true;
}

bool load_bundle(const std::string& dir, Bundle& out, std::string& error) {
  std::error_code ec;
  fs::path root(dir);
  if (!fs::is_directory(root, ec)) {
    error = fmt::format("'{}' is not a directory (a bundle is a directory with context.json and logs/)", dir);
    return false;
  }
  fs::path ctx = root / "context.json";
  std::ifstream in(ctx, std::ios::binary);
  if (!in) {
    error = fmt::format("cannot read {}", ctx.string());
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Bundle b;
  b.root = dir;
  if (!parse_context_json(ss.str(), b.context, error)) {
    error = ctx.string() + ": " + error;
    return false;
  }
  std::set<std::string> nodes(b.context.nodes.begin(), b.context.nodes.end());
  fs::path logs = root / "logs";
  if (fs::is_directory(logs, ec)) {
    std::vector<fs::path> hosts;
    for (fs::directory_iterator it(logs, ec), end; !ec && it != end; it.increment(ec)) hosts.push_back(it->path());
    std::sort(hosts.begin(), hosts.end());
    for (const auto& h : hosts) {
      std::string host = h.filename().string();
      if (!fs::is_directory(h, ec) || !valid_host_name(host)) {
        b.ignored_files.push_back(h.lexically_relative(root).generic_string());
        continue;
      }
      std::vector<fs::path> files;
      for (fs::recursive_directory_iterator it(h, ec), end; !ec && it != end; it.increment(ec))
        if (!it->is_directory(ec)) files.push_back(it->path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        std::string rel = f.lexically_relative(root).generic_string();
        std::string source = f.stem().string();
        if (f.parent_path() != h || f.extension() != ".log" || !valid_source_name(source) || !fs::is_regular_file(f, ec)) {
          b.ignored_files.push_back(rel);
          continue;
        }
        LogFile lf;
        lf.host = host;
        lf.source = source;
        lf.display_path = rel;
        lf.path = f.string();
        lf.control_plane = !nodes.count(host);
        lf.size = fs::file_size(f, ec);
        b.files.push_back(std::move(lf));
      }
    }
  }
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name == "context.json" || name == "logs") continue;
    if (name == "observations.jsonl") {
      b.observations_path = it->path().string();
      continue;
    }
    // Bundle-level documentation (README.md, a real case's SOURCE.md) and expectations are not evidence.
    if (name == "README.md" || name == "SOURCE.md" || name == "expected.json" || name == "expected-verdict.json") continue;
    b.ignored_files.push_back(name);
  }
  std::sort(b.ignored_files.begin(), b.ignored_files.end());
  out = std::move(b);
  return true;
}

}  // namespace culprit
