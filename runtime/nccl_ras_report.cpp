#include "runtime/nccl_ras_report.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "base/limits.h"
#include "base/timestamp.h"
#include "runtime/json_input.h"

namespace culprit {

namespace {

using nlohmann::json;

// ncclResult_t (NVIDIA/nccl src/nccl.h.in): the values RAS reports as a
// rank's init_state and async_error.
const char* nccl_result_name(int64_t code) {
  static const char* const names[] = {"ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError",
                                      "ncclInternalError",   "ncclInvalidArgument",    "ncclInvalidUsage",
                                      "ncclRemoteError",     "ncclInProgress"};
  return code >= 0 && code < 8 ? names[code] : nullptr;
}

std::string result_text(int64_t code) {
  const char* n = nccl_result_name(code);
  return n ? fmt::format("{} ({})", code, n) : fmt::format("{}", code);
}

// Readers of one member, strict about its type when it is present. `where`
// names the object in messages ("communicators[2].ranks[5]").
struct Fields {
  const json& j;
  std::string where;
  std::string& error;

  const json* get(const char* key) const {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }
  bool bad(const char* key, const char* want) const {
    error = fmt::format("RS002: {}{}{} is not {}", where, where.empty() ? "" : ".", key, want);
    return false;
  }
  bool integer(const char* key, int64_t& out, bool required = true) const {
    const json* v = get(key);
    if (!v) return required ? bad(key, "present") : true;
    if (!v->is_number_integer()) return bad(key, "an integer");
    out = v->get<int64_t>();
    return true;
  }
  bool text(const char* key, std::string& out, bool required = true) const {
    const json* v = get(key);
    if (!v) return required ? bad(key, "present") : true;
    if (!v->is_string()) return bad(key, "a string");
    out = v->get<std::string>();
    return true;
  }
  bool flag(const char* key, bool& out) const {
    const json* v = get(key);
    if (!v) return true;
    if (!v->is_boolean()) return bad(key, "true or false");
    out = v->get<bool>();
    return true;
  }
  bool object(const char* key, const json*& out) const {
    out = get(key);
    if (out && !out->is_object()) return bad(key, "an object");
    return true;
  }
  bool array(const char* key, const json*& out) const {
    out = get(key);
    if (out && !out->is_array()) return bad(key, "an array");
    return true;
  }
};

struct Rank {
  int64_t rank = -1, pid = 0, gpu = -1;  // gpu: nvml_dev, else cuda_dev
  std::string host;
  // Answered ranks.
  int64_t init_state = 0, async_error = 0;
  bool abort_flag = false, finalize_called = false;
  std::map<std::string, int64_t> counts;  // by operation type
  // Missing ranks.
  bool unresponsive = false, dead = false;

  std::string process() const {
    return fmt::format("process {} on node {} managing GPU {}", pid, host.empty() ? "?" : host, gpu);
  }
};

struct Communicator {
  std::string hash, secondary;
  int64_t size = 0;
  std::vector<Rank> ranks, missing;
};

bool read_rank(const json& j, const std::string& where, bool missing, Rank& r, std::string& error) {
  if (!j.is_object()) {
    error = fmt::format("RS002: {} is not an object", where);
    return false;
  }
  Fields f{j, where, error};
  int64_t cuda = -1, nvml = -1;
  if (!f.integer("rank", r.rank) || !f.text("host", r.host, false) || !f.integer("pid", r.pid, false) ||
      !f.integer("cuda_dev", cuda, false) || !f.integer("nvml_dev", nvml, false))
    return false;
  r.gpu = nvml >= 0 ? nvml : cuda;
  const json* status = nullptr;
  if (!f.object("status", status)) return false;
  if (status) {
    Fields s{*status, where + ".status", error};
    if (missing) {
      if (!s.flag("unresponsive", r.unresponsive) || !s.flag("considered_dead", r.dead)) return false;
    } else {
      bool destroy = false;
      if (!s.integer("init_state", r.init_state, false) || !s.integer("async_error", r.async_error, false) ||
          !s.flag("finalize_called", r.finalize_called) || !s.flag("destroy_flag", destroy) || !s.flag("abort_flag", r.abort_flag))
        return false;
    }
  }
  if (missing) return true;
  const json* counts = nullptr;
  if (!f.object("collective_counts", counts)) return false;
  if (counts)
    for (const auto& [op, n] : counts->items()) {
      if (!n.is_number_integer()) {
        error = fmt::format("RS002: {}.collective_counts.{} is not an integer", where, op);
        return false;
      }
      r.counts[op] = n.get<int64_t>();
    }
  return true;
}

}  // namespace

bool is_nccl_ras_json(std::string_view bytes) {
  size_t i = bytes.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && bytes[i] == '{';
}

bool read_nccl_ras_json(std::string_view bytes, const std::string& host, const std::string& file, int64_t world_size,
                        std::vector<Observation>& out, std::string& error) {
  if (bytes.size() > limits::kRasReportBytes) {
    error = fmt::format("RS003: the report is {} bytes, more than the limit of {} (ras_report_bytes)", bytes.size(),
                        limits::kRasReportBytes);
    return false;
  }
  json root;
  JsonInputError jerr;
  if (!parse_json_input(bytes, root, jerr)) {
    error = "RS001: " + jerr.message;
    return false;
  }
  if (!root.is_object() || !root.contains("communicators")) {
    error = "RS001: not an NCCL RAS report (a JSON object with \"communicators\", as ncclras -f json prints)";
    return false;
  }
  Fields top{root, "", error};
  std::string version, stamp;
  int64_t timeouts = 0;
  const json* comms = nullptr;
  const json* ras = nullptr;
  if (!top.text("nccl_version", version, false) || !top.text("timestamp", stamp, false) || !top.array("communicators", comms) ||
      !top.object("ras", ras))
    return false;
  if (ras && !Fields{*ras, "ras", error}.integer("timeouts_count", timeouts, false)) return false;

  std::vector<Communicator> list;
  size_t index = 0;
  for (const json& c : *comms) {
    std::string where = fmt::format("communicators[{}]", index++);
    if (!c.is_object()) {
      error = fmt::format("RS002: {} is not an object", where);
      return false;
    }
    Fields f{c, where, error};
    Communicator m;
    const json* ranks = nullptr;
    const json* missing = nullptr;
    if (!f.text("hash", m.hash) || !f.text("secondary_hash", m.secondary, false) || !f.integer("size", m.size, false) ||
        !f.array("ranks", ranks) || !f.array("missing_ranks", missing))
      return false;
    for (auto [arr, name, is_missing] : {std::tuple{ranks, "ranks", false}, std::tuple{missing, "missing_ranks", true}}) {
      if (!arr) continue;
      size_t k = 0;
      for (const json& r : *arr) {
        Rank x;
        if (!read_rank(r, fmt::format("{}.{}[{}]", where, name, k++), is_missing, x, error)) return false;
        (is_missing ? m.missing : m.ranks).push_back(std::move(x));
      }
    }
    auto by_rank = [](const Rank& a, const Rank& b) { return std::tie(a.rank, a.host, a.pid) < std::tie(b.rank, b.host, b.pid); };
    std::sort(m.ranks.begin(), m.ranks.end(), by_rank);
    std::sort(m.missing.begin(), m.missing.end(), by_rank);
    list.push_back(std::move(m));
  }
  // The document's order is the order RAS met the communicators in: sorted
  // here, so the same report gives the same lines.
  std::sort(list.begin(), list.end(),
            [](const Communicator& a, const Communicator& b) { return std::tie(a.hash, a.secondary) < std::tie(b.hash, b.secondary); });

  // "2025-12-19 13:06:53", the client's clock, dated like any log line of
  // that form.
  std::optional<int64_t> ts;
  if (stamp.size() == 19 && stamp[10] == ' ') ts = parse_rfc3339(stamp.substr(0, 10) + "T" + stamp.substr(11) + "Z");

  std::vector<Observation> lines;
  auto emit = [&](std::string text) {
    Observation o;
    o.host = host;
    o.source = "ras";
    o.ts = ts;
    o.text = std::move(text);
    o.file = file;
    o.line = static_cast<int64_t>(lines.size()) + 1;
    lines.push_back(std::move(o));
  };
  emit(fmt::format("nccl ras report: {}, NCCL {}, {} communicator{}, {} timeout{}", stamp.empty() ? "undated" : stamp,
                   version.empty() ? "?" : version, list.size(), list.size() == 1 ? "" : "s", timeouts, timeouts == 1 ? "" : "s"));
  for (const Communicator& c : list) {
    const std::string name = fmt::format("communicator {} of {} ranks{}", c.hash, c.size,
                                         world_size > 0 && c.size == world_size ? " (all the job's ranks)" : "");
    emit(fmt::format("nccl ras report: {}: {} rank{} answered, {} missing", name, c.ranks.size(),
                     c.ranks.size() == 1 ? "" : "s", c.missing.size()));
    for (const Rank& r : c.missing)
      emit(fmt::format("nccl ras report: {} rank {} missing: {} {}", name, r.rank, r.process(),
                       r.dead ? "is considered dead" : r.unresponsive ? "is unresponsive" : "answered but is not a member"));
    for (const Rank& r : c.ranks) {
      if (r.init_state != 0 && r.init_state != 7)
        emit(fmt::format("nccl ras report: {} rank {} failed to initialise with {}: {}", name, r.rank, result_text(r.init_state),
                         r.process()));
      if (r.async_error != 0 && r.async_error != 7)
        emit(fmt::format("nccl ras report: {} rank {} reports asynchronous error {}: {}", name, r.rank, result_text(r.async_error),
                         r.process()));
      if (r.abort_flag) emit(fmt::format("nccl ras report: {} rank {} was aborted: {}", name, r.rank, r.process()));
    }
    // Per operation type, the count most ranks share, and each rank off it.
    std::map<std::string, std::map<int64_t, int64_t>> freq;  // op -> count -> ranks
    for (const Rank& r : c.ranks)
      for (const auto& [op, n] : r.counts) ++freq[op][n];
    for (const auto& [op, counts] : freq) {
      if (counts.size() < 2) continue;
      int64_t ref = 0, ref_ranks = -1;
      for (const auto& [n, k] : counts)
        if (k >= ref_ranks) ref = n, ref_ranks = k;  // ascending: a tie keeps the larger count
      for (const Rank& r : c.ranks) {
        auto it = r.counts.find(op);
        if (it == r.counts.end() || it->second == ref) continue;
        emit(fmt::format("nccl ras report: {} rank {} launched {} {} operations while {} rank{} launched {}: {}", name, r.rank,
                         it->second, op, ref_ranks, ref_ranks == 1 ? "" : "s", ref, r.process()));
      }
    }
  }
  for (auto& o : lines) out.push_back(std::move(o));
  return true;
}

}  // namespace culprit
