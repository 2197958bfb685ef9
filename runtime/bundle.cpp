#include "runtime/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <optional>
#include <sstream>
#include <tuple>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/limits.h"
#include "base/suggest.h"
#include "base/terminal_state.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "runtime/flight_recorder.h"
#include "runtime/nccl_ras_report.h"
#include "runtime/json_input.h"

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

// An integer that fits int64; JSON numbers above INT64_MAX (parsed as
// unsigned) and below INT64_MIN (parsed as floats) are out of range.
bool int64_of(const nlohmann::json& v, int64_t& out) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
    out = static_cast<int64_t>(v.get<uint64_t>());
    return true;
  }
  if (!v.is_number_integer()) return false;
  out = v.get<int64_t>();
  return true;
}

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

// A node's "ranks" or "tasks": "0-7,16" or [0, 1, 2], as inclusive ranges.
// At most kMaxListedRanks numbers per node, each below 2^31.
constexpr int64_t kMaxListedRanks = 1 << 20;
bool parse_rank_list(const nlohmann::json& v, const std::string& where, std::vector<std::pair<int64_t, int64_t>>& out,
                     std::string& error) {
  auto bad = [&](const std::string& what) {
    error = fmt::format("context: {} at {} (ranks are \"0-7,16\" or [0, 1, 2]: numbers from 0, ranges first-last)", what,
                        where);
    return false;
  };
  auto number = [](std::string_view d) -> std::optional<int64_t> {
    if (d.empty() || d.size() > 10 || d.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    int64_t n = std::stoll(std::string(d));
    if (n >= (int64_t{1} << 31)) return std::nullopt;
    return n;
  };
  int64_t count = 0;
  auto add = [&](int64_t lo, int64_t hi) {
    count += hi - lo + 1;
    out.emplace_back(lo, hi);
    return count <= kMaxListedRanks;
  };
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_integer() || v[i].get<int64_t>() < 0 || v[i].get<int64_t>() >= (int64_t{1} << 31))
        return bad(fmt::format("{} is not a rank", describe_json_value(v[i])));
      if (!add(v[i].get<int64_t>(), v[i].get<int64_t>())) return bad("more than 1048576 ranks");
    }
  } else if (v.is_string()) {
    std::string_view s = v.get_ref<const std::string&>();
    while (!s.empty()) {
      size_t comma = s.find(',');
      std::string_view part = s.substr(0, comma);
      s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
      while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
      while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
      size_t dash = part.find('-');
      auto lo = number(part.substr(0, dash));
      auto hi = dash == std::string_view::npos ? lo : number(part.substr(dash + 1));
      if (!lo || !hi || *hi < *lo)
        return bad(fmt::format("'{}' is not a rank or a range of ranks", truncate_utf8(sanitize_utf8(std::string(part)), 32)));
      if (!add(*lo, *hi)) return bad("more than 1048576 ranks");
    }
  } else {
    return bad(fmt::format("{} is not a list of ranks", describe_json_value(v)));
  }
  if (out.empty()) return bad("an empty list");
  return true;
}

// "0-7,16" for a node's ranges, as parse_rank_list reads it back.
std::string rank_list_text(const std::vector<WorkloadContext::RankRange>& ranges, const std::string& node) {
  std::string s;
  for (const auto& r : ranges)
    if (r.node == node) s += (s.empty() ? "" : ",") + (r.first == r.last ? std::to_string(r.first) : fmt::format("{}-{}", r.first, r.last));
  return s;
}

// Sorts the ranges and refuses a number given for two nodes.
bool settle_ranges(std::vector<WorkloadContext::RankRange>& ranges, const char* what, std::string& error) {
  std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return std::tie(a.first, a.last, a.node) < std::tie(b.first, b.last, b.node); });
  std::vector<WorkloadContext::RankRange> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().last + (r.node == merged.back().node ? 1 : 0)) {
      if (r.node != merged.back().node) {
        error = fmt::format("context: {} {} is given for two nodes ('{}' and '{}')", what, r.first, merged.back().node, r.node);
        return false;
      }
      merged.back().last = std::max(merged.back().last, r.last);
      continue;
    }
    merged.push_back(r);
  }
  ranges = std::move(merged);
  return true;
}

// The "nodes" of a context (limit context_nodes). Bad values are described
// with describe_json_value, never dumped whole, and located by their JSON
// pointer.
bool parse_context_nodes(const nlohmann::json& list, WorkloadContext& c, std::string& error) {
  if (list.size() > limits::kContextNodes) {
    error = limits::exceeded("context_nodes", limits::kContextNodes, fmt::format("the context lists {} nodes", list.size()),
                             "/nodes");
    return false;
  }
  std::map<std::string, std::string> owner;  // lowered name or alias -> node
  std::vector<std::pair<std::string, std::vector<std::string>>> given;
  given.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& n = list[i];
    std::string name;
    std::vector<std::string> aliases;
    if (n.is_string()) {
      name = n.get<std::string>();
    } else if (n.is_object()) {
      for (auto it = n.begin(); it != n.end(); ++it)
        if (it.key() != "name" && it.key() != "aliases" && it.key() != "ranks" && it.key() != "tasks") {
          error = fmt::format("context: unknown key '{}' in a node at /nodes/{} (known: name, aliases, ranks, tasks)",
                              truncate_utf8(sanitize_utf8(it.key()), 64), i);
          return false;
        }
      if (!n.contains("name") || !n["name"].is_string()) {
        error = fmt::format("context: a node object needs a \"name\" string at /nodes/{}", i);
        return false;
      }
      name = n["name"].get<std::string>();
      if (n.contains("aliases")) {
        if (!n["aliases"].is_array()) {
          error = fmt::format("context: the aliases of node {} at /nodes/{}/aliases must be an array of host names or addresses",
                              describe_json_value(nlohmann::json(name)), i);
          return false;
        }
        const auto& list_of = n["aliases"];
        for (size_t k = 0; k < list_of.size(); ++k) {
          const auto& a = list_of[k];
          if (!a.is_string() || !valid_alias(a.get<std::string>())) {
            error = fmt::format("context: invalid alias {} at /nodes/{}/aliases/{}", describe_json_value(a), i, k);
            return false;
          }
          aliases.push_back(a.get<std::string>());
        }
      }
    } else {
      error = fmt::format("context: invalid node name {} at /nodes/{} (a node is a host name, or {{\"name\": ..., \"aliases\": [...]}})",
                          describe_json_value(n), i);
      return false;
    }
    if (!valid_host_name(name)) {
      error = fmt::format("context: invalid node name {} at /nodes/{}", describe_json_value(nlohmann::json(name)), i);
      return false;
    }
    for (const char* key : {"ranks", "tasks"}) {
      if (!n.is_object() || !n.contains(key)) continue;
      std::vector<std::pair<int64_t, int64_t>> listed;
      if (!parse_rank_list(n[key], fmt::format("/nodes/{}/{}", i, key), listed, error)) return false;
      auto& into = std::string_view(key) == "ranks" ? c.ranks : c.tasks;
      for (const auto& [lo, hi] : listed) into.push_back({lo, hi, name});
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
  if (!settle_ranges(c.ranks, "rank", error) || !settle_ranges(c.tasks, "srun task", error)) return false;
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

std::string_view rank_node(const WorkloadContext& ctx, int64_t rank) {
  // ranks is sorted by `first` and never overlaps (runtime/model.h).
  auto it = std::upper_bound(ctx.ranks.begin(), ctx.ranks.end(), rank,
                             [](int64_t r, const WorkloadContext::RankRange& x) { return r < x.first; });
  if (it == ctx.ranks.begin()) return {};
  --it;
  return rank <= it->last ? std::string_view(it->node) : std::string_view();
}

int64_t context_world_size(const WorkloadContext& ctx) {
  int64_t next = 0;  // ranges are sorted by `first` and never overlap
  for (const auto& r : ctx.ranks) {
    if (r.first != next) return 0;
    next = r.last + 1;
  }
  return next;
}

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
  if (fits.size() > 1 && how) *how = fmt::format("{}{}", kAmbiguousHost, fmt::join(fits, ", "));
  return "";
}

nlohmann::ordered_json context_to_json(const WorkloadContext& c) {
  nlohmann::ordered_json j;
  j["workload_id"] = c.workload_id;
  j["scheduler"] = c.scheduler;
  if (c.start) j["start"] = format_rfc3339(*c.start);
  if (c.end) j["end"] = format_rfc3339(*c.end);
  auto nodes = nlohmann::ordered_json::array();
  for (const auto& n : c.nodes) {
    auto a = c.aliases.find(n);
    const std::string ranks = rank_list_text(c.ranks, n), tasks = rank_list_text(c.tasks, n);
    if ((a == c.aliases.end() || a->second.empty()) && ranks.empty() && tasks.empty()) {
      nodes.push_back(n);
      continue;
    }
    nlohmann::ordered_json o;
    o["name"] = n;
    if (a != c.aliases.end() && !a->second.empty()) o["aliases"] = a->second;
    if (!ranks.empty()) o["ranks"] = ranks;
    if (!tasks.empty()) o["tasks"] = tasks;
    nodes.push_back(std::move(o));
  }
  j["nodes"] = std::move(nodes);
  auto t = nlohmann::ordered_json::object();
  if (!c.terminal.state.empty()) t["state"] = c.terminal.state;
  if (c.terminal.exit_code) t["exit_code"] = *c.terminal.exit_code;
  if (!t.empty()) j["terminal"] = std::move(t);
  return j;
}

bool parse_context_json(const std::string& text, WorkloadContext& out, std::string& error) {
  if (text.size() > limits::kContextBytes) {
    error = limits::exceeded("context_bytes", limits::kContextBytes, fmt::format("the context is {} bytes", text.size()));
    return false;
  }
  nlohmann::json j;
  JsonInputError je;
  if (!parse_json_input(text, j, je)) {
    error = je.kind == JsonInputError::Kind::Syntax ? "context is " + je.message : "context: " + je.message;
    return false;
  }
  return parse_context(j, out, error);
}

bool parse_context(const nlohmann::json& j, WorkloadContext& out, std::string& error) {
  if (!j.is_object()) {
    error = "context must be a JSON object";
    return false;
  }
  static const std::set<std::string> known = {"workload_id", "scheduler", "start", "end", "nodes", "terminal"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!known.count(it.key())) {
      error = fmt::format("context: unknown key '{}' (known: workload_id, scheduler, start, end, nodes, terminal)",
                          truncate_utf8(sanitize_utf8(it.key()), 64));
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
    error = fmt::format("context: 'scheduler' must be slurm, kubernetes or static, not '{}'",
                        truncate_utf8(sanitize_utf8(c.scheduler), 64));
    return false;
  }
  for (const char* key : {"start", "end"}) {
    std::string s;
    if (!str(key, s, false)) return false;
    if (s.empty()) continue;
    auto ns = parse_rfc3339(s);
    if (!ns) {
      std::string hint = rfc3339_hint(s);
      error = fmt::format("context: '{}' is not an RFC 3339 time: '{}'{}", key, truncate_utf8(sanitize_utf8(s), 64),
                          hint.empty() ? " (such as 2026-05-11T08:40:00Z)" : "; " + hint);
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
        error = fmt::format("context: unknown key 'terminal.{}'", truncate_utf8(sanitize_utf8(it.key()), 64));
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
      int64_t code = 0;
      if (!int64_of(t["exit_code"], code)) {
        error = t["exit_code"].is_number() && !t["exit_code"].is_number_float()
                    ? fmt::format("context: 'terminal.exit_code' {} is out of range (a 64-bit signed integer)",
                                  t["exit_code"].dump())
                    : "context: 'terminal.exit_code' must be an integer";
        return false;
      }
      c.terminal.exit_code = code;
    }
  }
  out = std::move(c);
  return true;
}

namespace {

const char* type_name(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::not_found: return "missing";
    case fs::file_type::regular: return "a regular file";
    default: return "not a regular file";
  }
}

// Is `p` (canonical) `root` (canonical) or inside it?
bool within(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q) return false;
  return true;
}

// A directory entry of the bundle as it will be read: links are followed
// only while their target stays inside the bundle root.
struct Resolved {
  fs::file_type type = fs::file_type::none;  // of the target
  fs::path path;                             // to open (the target for links)
  std::string why;                           // set when the entry must not be read
};

Resolved resolve(const fs::path& root, const fs::path& p) {
  Resolved r;
  std::error_code ec;
  auto st = fs::symlink_status(p, ec);
  if (st.type() == fs::file_type::not_found) {
    r.type = fs::file_type::not_found;
    return r;
  }
  if (ec) {
    r.why = fmt::format("cannot be examined: {}", ec.message());
    return r;
  }
  r.path = p;
  r.type = st.type();
  if (st.type() != fs::file_type::symlink) return r;
  fs::path target = fs::canonical(p, ec);
  if (ec) {
    r.why = "a broken symbolic link";
    return r;
  }
  if (!within(root, target)) {
    r.why = fmt::format("a symbolic link out of the bundle (to {})", target.string());
    return r;
  }
  r.path = target;
  r.type = fs::status(target, ec).type();
  if (ec) r.why = fmt::format("cannot be examined: {}", ec.message());
  return r;
}

// The entries of one directory, sorted. A listing that fails (or stops
// half way) is a warning: what was listed is kept, the rest is reported.
std::vector<fs::path> list_dir(const fs::path& dir, const std::string& shown, std::vector<std::string>& warnings) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  if (ec)
    warnings.push_back(fmt::format("{}: cannot list the directory{}: {}", shown, out.empty() ? "" : " to its end",
                                   ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

// Reads a small file of the bundle (context.json) whole: only a regular file
// inside the bundle, at most `limit` bytes; never blocks (FIFOs are refused
// before they are read) and a read error is an error, not the end.
bool read_bundle_file(const fs::path& root, const fs::path& p, const std::string& shown, size_t limit,
                      const char* limit_name, std::string& out, std::string& error) {
  Resolved r = resolve(root, p);
  if (r.type == fs::file_type::not_found && r.why.empty()) {
    error = fmt::format("cannot read {}: no such file (a bundle is a directory with context.json and logs/)", shown);
    return false;
  }
  if (!r.why.empty()) {
    error = fmt::format("cannot read {}: {}", shown, r.why);
    return false;
  }
  if (r.type != fs::file_type::regular) {
    error = fmt::format("cannot read {}: it is {}, not a regular file", shown, type_name(r.type));
    return false;
  }
  int fd = ::open(r.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    error = fmt::format("cannot read {}: {}", shown, std::strerror(errno));
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced since it was examined
    ::close(fd);
    error = fmt::format("cannot read {}: not a regular file", shown);
    return false;
  }
  out.clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      error = fmt::format("cannot read {}: {}", shown, std::strerror(errno));
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > limit) {
      ::close(fd);
      error = limits::exceeded(limit_name, limit,
                               fmt::format("{} is {} bytes", shown, std::max<uint64_t>(static_cast<uint64_t>(st.st_size),
                                                                                       out.size() + static_cast<size_t>(n))));
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

// True when the file's first bytes that are not blank open a JSON object
// (runtime/nccl_ras_report.h); a file that cannot be read is left to the
// log reader, which says why.
bool starts_as_ras_json(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return n > 0 && is_nccl_ras_json(std::string_view(buf, static_cast<size_t>(n)));
}

}  // namespace

bool load_bundle(const std::string& dir, Bundle& out, std::string& error) {
  std::error_code ec;
  fs::path root(dir);
  if (!fs::is_directory(root, ec)) {
    error = fmt::format("'{}' is not a directory (a bundle is a directory with context.json and logs/)", dir);
    return false;
  }
  // Links are followed only while they stay inside this directory.
  fs::path canon = fs::canonical(root, ec);
  if (ec) {
    error = fmt::format("cannot resolve '{}': {}", dir, ec.message());
    return false;
  }
  fs::path ctx = root / "context.json";
  std::string text;
  if (!read_bundle_file(canon, ctx, ctx.string(), limits::kContextBytes, "context_bytes", text, error)) return false;
  Bundle b;
  b.root = dir;
  if (!parse_context_json(text, b.context, error)) {
    error = ctx.string() + ": " + error;
    return false;
  }
  std::set<std::string> nodes(b.context.nodes.begin(), b.context.nodes.end());
  auto rel_of = [&](const fs::path& p) { return p.lexically_relative(root).generic_string(); };
  // Not read, with the reason: a warning names it, ignored_files lists it.
  auto refuse = [&](const fs::path& p, const std::string& why) { b.refused_files.push_back({rel_of(p), why}); };
  // The files under a directory nested in logs/<host>/ are not logs: each
  // is listed as ignored (an explicit stack, not recursion; links to
  // directories are listed, not followed). `shown` is the bundle path of
  // `real`, the directory to list.
  auto ignore_tree = [&](const fs::path& shown, const fs::path& real) {
    std::vector<std::pair<fs::path, fs::path>> todo{{shown, real}};
    while (!todo.empty()) {
      auto [s, d] = todo.back();
      todo.pop_back();
      for (const auto& e : list_dir(d, rel_of(s), b.warnings)) {
        auto st = fs::symlink_status(e, ec);
        if (!ec && st.type() == fs::file_type::directory) todo.emplace_back(s / e.filename(), e);
        else b.ignored_files.push_back(rel_of(s / e.filename()));
      }
    }
  };

  // DIR/<host>/<file>, for logs/ and traces/ alike: a DIR or <host> that is a
  // link out of the bundle is refused; a <host> that is not a directory or
  // not a host name, and a directory below <host>, is listed as ignored;
  // visit(host, shown path, resolved file) gets every other entry.
  auto walk_hosts = [&](const fs::path& dir, const char* label, auto&& visit) {
    Resolved dr = resolve(canon, dir);
    if (!dr.why.empty()) {
      refuse(dir, dr.why);
      return;
    }
    if (dr.type == fs::file_type::not_found) return;
    if (dr.type != fs::file_type::directory) {
      refuse(dir, fmt::format("it is {}, not a directory", type_name(dr.type)));
      return;
    }
    for (const auto& h : list_dir(dr.path, label, b.warnings)) {
      fs::path shown_h = dir / h.filename();
      std::string host = h.filename().string();
      Resolved hr = resolve(canon, h);
      if (!hr.why.empty()) {
        refuse(shown_h, hr.why);
        continue;
      }
      if (hr.type != fs::file_type::directory || !valid_host_name(host)) {
        b.ignored_files.push_back(rel_of(shown_h));
        continue;
      }
      for (const auto& f : list_dir(hr.path, rel_of(shown_h), b.warnings)) {
        fs::path shown_f = shown_h / f.filename();
        Resolved fr = resolve(canon, f);
        if (!fr.why.empty()) {
          refuse(shown_f, fr.why);
          continue;
        }
        if (fr.type == fs::file_type::directory) {
          ignore_tree(shown_f, fr.path);
          continue;
        }
        visit(host, shown_f, f, fr);
      }
    }
  };

  walk_hosts(root / "logs", "logs", [&](const std::string& host, const fs::path& shown_f, const fs::path& f, const Resolved& fr) {
    std::string source = f.stem().string();
    if (f.extension() != ".log" || !valid_source_name(source)) {
      b.ignored_files.push_back(rel_of(shown_f));
      return;
    }
    if (fr.type != fs::file_type::regular) {
      refuse(shown_f, fmt::format("it is {}, not a regular file", type_name(fr.type)));
      return;
    }
    // A `ras` file holding ncclras's JSON form is one document, not lines:
    // read whole (at most limits::kRasReportBytes) and rendered as lines.
    if (source == "ras" && starts_as_ras_json(fr.path)) {
      std::string bytes, why;
      if (!read_bundle_file(canon, f, rel_of(shown_f), limits::kRasReportBytes, "ras_report_bytes", bytes, why) ||
          !read_nccl_ras_json(bytes, host, rel_of(shown_f), context_world_size(b.context), b.observations, why))
        refuse(shown_f, why);
      return;
    }
    LogFile lf;
    lf.host = host;
    lf.source = source;
    lf.display_path = rel_of(shown_f);
    lf.path = fr.path.string();
    lf.control_plane = !nodes.count(host);
    lf.size = fs::file_size(fr.path, ec);
    if (ec) lf.size = 0;
    b.files.push_back(std::move(lf));
  });

  // traces/<host>/<file>: Flight Recorder dumps, read whole (each at most
  // limits::kPickleBytes) and rendered as observations of source
  // flight_recorder. A dump that cannot be read is refused with its coded
  // reason; the others are still read.
  FlightRecorderSet dumps;
  walk_hosts(root / "traces", "traces", [&](const std::string& host, const fs::path& shown_f, const fs::path& f, const Resolved&) {
    int64_t rank = flight_recorder_rank_from_name(f.filename().string());
    if (rank < 0) {
      refuse(shown_f, "no rank at the end of its name (PyTorch names a dump PREFIX<rank>, e.g. nccl_trace_rank_3)");
      return;
    }
    if (dumps.size() >= limits::kFlightRecorderDumps) {
      refuse(shown_f, limits::exceeded("flight_recorder_dumps", limits::kFlightRecorderDumps, "dumps in traces/"));
      return;
    }
    std::string bytes, why;
    FlightRecorderDump dump;
    if (!read_bundle_file(canon, f, rel_of(shown_f), limits::kPickleBytes, "pickle_bytes", bytes, why) ||
        !read_flight_recorder_dump(std::move(bytes), rank, host, rel_of(shown_f), dump, why)) {
      refuse(shown_f, why);
      return;
    }
    dumps.add(std::move(dump));
  });
  if (dumps.size()) {
    const WorkloadContext& c = b.context;
    for (auto& o : dumps.observations([&c](int64_t r) { return std::string(rank_node(c, r)); })) b.observations.push_back(std::move(o));
  }

  // observations.jsonl is looked up by name, not found through the listing
  // below, so a root that cannot be listed still has it read (or refused).
  fs::path obs = root / "observations.jsonl";
  Resolved orr = resolve(canon, obs);
  if (!orr.why.empty()) refuse(obs, orr.why);
  else if (orr.type != fs::file_type::not_found) b.observations_path = orr.path.string();  // non-regular: refused by the reader

  for (const auto& p : list_dir(root, "the bundle directory", b.warnings)) {
    std::string name = p.filename().string();
    if (name == "context.json" || name == "logs" || name == "traces" || name == "observations.jsonl") continue;
    // Bundle-level documentation (README.md, a real case's SOURCE.md) and expectations are not evidence.
    if (name == "README.md" || name == "SOURCE.md" || name == "expected.json" || name == "expected-verdict.json") continue;
    b.ignored_files.push_back(name);
  }
  std::sort(b.ignored_files.begin(), b.ignored_files.end());
  b.ignored_files.erase(std::unique(b.ignored_files.begin(), b.ignored_files.end()), b.ignored_files.end());
  std::sort(b.refused_files.begin(), b.refused_files.end(),
            [](const RefusedFile& x, const RefusedFile& y) { return x.path < y.path; });
  std::sort(b.warnings.begin(), b.warnings.end());
  out = std::move(b);
  return true;
}

std::string missing_logs_message(const Bundle& b, const std::string& dir) {
  // Logs that were refused (a link out of the bundle, a FIFO) are reported in
  // the verdict's coverage with why: that bundle is diagnosed, and says so.
  if (!b.files.empty() || !b.refused_files.empty() || !b.observations_path.empty() || !b.observations.empty()) return "";
  std::string seen = b.ignored_files.empty()
                         ? std::string("it has no logs/ files")
                         : fmt::format("only {} other file{}: {}{}", b.ignored_files.size(), b.ignored_files.size() == 1 ? "" : "s",
                                       b.ignored_files.front(), b.ignored_files.size() > 1 ? ", ..." : "");
  return fmt::format("{} holds no log to read ({}); put each node's logs in logs/<host>/<source>.log, or observations in "
                     "observations.jsonl (docs/bundle.md)", dir, seen);
}

}  // namespace culprit
