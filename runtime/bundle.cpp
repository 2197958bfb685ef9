#include "runtime/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/suggest.h"
#include "base/terminal_state.h"
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

namespace {

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

// An alias may also be an IP address (IPv6 has colons).
bool valid_alias(std::string_view s) {
  if (valid_host_name(s)) return true;
  return !s.empty() && s.size() <= 64 && s.find(':') != std::string_view::npos &&
         std::all_of(s.begin(), s.end(), [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)) || ch == ':' || ch == '.'; });
}

bool parse_context_nodes(const nlohmann::json& list, WorkloadContext& c, std::string& error) {
  std::map<std::string, std::string> owner;  // lowered name or alias -> node
  std::vector<std::pair<std::string, std::vector<std::string>>> given;
  for (const auto& n : list) {
    std::string name;
    std::vector<std::string> aliases;
    if (n.is_string()) {
      name = n.get<std::string>();
    } else if (n.is_object()) {
      for (auto it = n.begin(); it != n.end(); ++it)
        if (it.key() != "name" && it.key() != "aliases") {
          error = fmt::format("context: unknown key '{}' in a node (known: name, aliases)", it.key());
          return false;
        }
      if (!n.contains("name") || !n["name"].is_string()) {
        error = fmt::format("context: a node object needs a \"name\": {}", n.dump());
        return false;
      }
      name = n["name"].get<std::string>();
      if (n.contains("aliases")) {
        if (!n["aliases"].is_array()) {
          error = fmt::format("context: the aliases of node '{}' must be an array of host names or addresses", name);
          return false;
        }
        for (const auto& a : n["aliases"]) {
          if (!a.is_string() || !valid_alias(a.get<std::string>())) {
            error = fmt::format("context: invalid alias {} of node '{}'", a.dump(), name);
            return false;
          }
          aliases.push_back(a.get<std::string>());
        }
      }
    } else {
      error = fmt::format("context: invalid node name {} (a node is a host name, or {{\"name\": ..., \"aliases\": [...]}})", n.dump());
      return false;
    }
    if (!valid_host_name(name)) {
      error = fmt::format("context: invalid node name {}", nlohmann::json(name).dump());
      return false;
    }
    given.emplace_back(name, aliases);
  }
  for (const auto& [name, aliases] : given) owner.emplace(lowered(name), name);
  for (const auto& [name, aliases] : given) {
    c.nodes.push_back(name);
    for (const auto& a : aliases) {
      auto [it, fresh] = owner.emplace(lowered(a), name);
      if (!fresh && it->second != name) {
        error = fmt::format("context: '{}' is given for two nodes ('{}' and '{}')", a, it->second, name);
        return false;
      }
      if (fresh || lowered(a) != lowered(name)) c.aliases[name].push_back(a);
    }
  }
  std::sort(c.nodes.begin(), c.nodes.end());
  c.nodes.erase(std::unique(c.nodes.begin(), c.nodes.end()), c.nodes.end());
  for (auto& [node, list] : c.aliases) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return true;
}

bool is_ipv4(std::string_view s) {
  int dots = 0;
  for (char ch : s) {
    if (ch == '.') ++dots;
    else if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
  }
  return dots == 3;
}

}  // namespace

std::string canonical_host(const WorkloadContext& ctx, const std::string& host, std::string* how) {
  if (how) how->clear();
  if (std::binary_search(ctx.nodes.begin(), ctx.nodes.end(), host)) return host;
  std::string h = lowered(host);
  for (const auto& n : ctx.nodes)
    if (lowered(n) == h) return n;
  for (const auto& [node, list] : ctx.aliases)
    for (const auto& a : list)
      if (lowered(a) == h) {
        if (how) *how = "alias";
        return node;
      }
  if (is_ipv4(h) || h.find(':') != std::string::npos) return "";
  auto first_label = [](const std::string& s) { return s.substr(0, s.find('.')); };
  std::vector<std::string> fits;
  std::string kind;
  if (h.find('.') != std::string::npos) {
    // An FQDN for a node given by its short name.
    for (const auto& n : ctx.nodes)
      if (n.find('.') == std::string::npos && lowered(n) == first_label(h)) fits.push_back(n);
    kind = "short name";
  } else {
    // The short name of a node given as an FQDN.
    for (const auto& n : ctx.nodes)
      if (n.find('.') != std::string::npos && first_label(lowered(n)) == h) fits.push_back(n);
    kind = "FQDN";
  }
  if (fits.size() == 1) {
    if (how) *how = kind;
    return fits[0];
  }
  if (fits.size() > 1 && how) *how = fmt::format("ambiguous: {}", fmt::join(fits, ", "));
  return "";
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
  if (!parse_context_nodes(j["nodes"], c, error)) return false;
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
      // A misspelt state would change the verdict without a word (only
      // COMPLETED is a clean end): refuse it. A state merely unknown is
      // accepted and named in the verdict's coverage warnings.
      // "Misspelt" is stricter than a suggestion: at most two edits
      // (SUCCEEDED is not a misspelt SUSPENDED).
      if (!c.terminal.state.empty() && !is_known_terminal_state(c.terminal.state))
        if (auto m = closest_match(c.terminal.state, known_terminal_states()); m && edit_distance(*m, c.terminal.state) <= 2) {
          error = fmt::format("context: unknown terminal.state '{}' (did you mean '{}'? known: {})", c.terminal.state, *m,
                              fmt::join(known_terminal_states(), ", "));
          return false;
        }
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
