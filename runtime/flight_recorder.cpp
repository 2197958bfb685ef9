// Flight Recorder dumps (flight_recorder.h). Both forms are brought to one
// JSON tree first (the pickle's values map one to one onto JSON's: tuples
// become arrays, keys strings), so one reader of the layout serves both.
#include "runtime/flight_recorder.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/limits.h"
#include "runtime/json_input.h"
#include "runtime/pickle_reader.h"

namespace culprit {
namespace {

using json = nlohmann::json;

// The pickle's values as JSON. Recursive, but only limits::kJsonDepth deep
// (a container that holds itself stops there), and at most
// limits::kPickleValues values are written, so a memo shared many times
// over cannot multiply the work.
class PickleToJson {
 public:
  explicit PickleToJson(const PickleDocument& d) : d_(d) {}
  bool convert(PickleDocument::Id v, json& out, std::string& error, size_t depth = 0) {
    using K = PickleDocument::Kind;
    if (++written_ > limits::kPickleValues) {
      error = fmt::format("FR001: the dump's values, with their shared parts written out, are more than {} (pickle_values)",
                          limits::kPickleValues);
      return false;
    }
    if (depth > limits::kJsonDepth) {
      error = fmt::format("FR001: the dump nests deeper than {} levels (a Flight Recorder dump nests 5)", limits::kJsonDepth);
      return false;
    }
    switch (d_.kind(v)) {
      case K::None: out = nullptr; return true;
      case K::Bool: out = d_.as_bool(v); return true;
      case K::Int: out = d_.as_int(v); return true;
      case K::Float: out = d_.as_float(v); return true;
      case K::String: out = std::string(d_.as_string(v)); return true;
      case K::List:
      case K::Tuple: {
        out = json::array();
        for (auto item : d_.items(v)) {
          json x;
          if (!convert(item, x, error, depth + 1)) return false;
          out.push_back(std::move(x));
        }
        return true;
      }
      case K::Dict: {
        out = json::object();
        const auto& kv = d_.items(v);
        for (size_t i = 0; i + 1 < kv.size(); i += 2) {
          std::string key;
          switch (d_.kind(kv[i])) {
            case K::String: key = d_.as_string(kv[i]); break;
            case K::Int: key = std::to_string(d_.as_int(kv[i])); break;
            default:
              error = "FR002: a dictionary key that is neither a string nor an integer";
              return false;
          }
          json x;
          if (!convert(kv[i + 1], x, error, depth + 1)) return false;
          out[key] = std::move(x);
        }
        return true;
      }
      case K::Builder:
        error = "FR002: a list builder that was never applied";
        return false;
    }
    return false;
  }

 private:
  const PickleDocument& d_;
  size_t written_ = 0;
};

// Readers of one key, strict about its type when it is present.
struct Fields {
  const json& j;
  std::string where;
  std::string& error;

  const json* find(const char* key) const {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }
  bool bad(const char* key, const char* want) {
    error = fmt::format("FR003: {} '{}' is {}, not {}", where, key, describe_json_value(j.at(key)), want);
    return false;
  }
  // An integer, or the decimal string dump_json writes for pg_status.
  bool integer(const char* key, std::optional<int64_t>& out) {
    const json* v = find(key);
    if (!v) return true;
    if (v->is_number_integer()) {
      out = v->get<int64_t>();
      return true;
    }
    if (v->is_string()) {
      const std::string& s = v->get_ref<const std::string&>();
      try {
        size_t used = 0;
        int64_t x = std::stoll(s, &used);
        if (used == s.size()) {
          out = x;
          return true;
        }
      } catch (...) {
      }
    }
    return bad(key, "an integer");
  }
  bool integer(const char* key, int64_t& out) {
    std::optional<int64_t> v;
    if (!integer(key, v)) return false;
    if (v) out = *v;
    return true;
  }
  bool text(const char* key, std::string& out) {
    const json* v = find(key);
    if (!v) return true;
    if (v->is_string()) out = v->get<std::string>();
    else if (v->is_number()) out = v->dump();
    else return bad(key, "a string");
    return true;
  }
  bool boolean(const char* key, std::optional<bool>& out) {
    const json* v = find(key);
    if (!v) return true;
    if (!v->is_boolean()) return bad(key, "a boolean");
    out = v->get<bool>();
    return true;
  }
};

// "[[1024, 8], [3]]" from a list of lists of integers.
bool sizes_text(const json* v, std::string& out) {
  out = "[";
  if (v) {
    if (!v->is_array()) return false;
    for (size_t i = 0; i < v->size(); ++i) {
      const json& arg = (*v)[i];
      if (!arg.is_array()) return false;
      out += i ? ", [" : "[";
      for (size_t k = 0; k < arg.size(); ++k) {
        if (!arg[k].is_number_integer()) return false;
        out += (k ? ", " : "") + std::to_string(arg[k].get<int64_t>());
      }
      out += "]";
    }
  }
  out += "]";
  return true;
}

// The frame where the job's code called the collective: the first one
// outside PyTorch (its own wrappers are frames 0 and 1 in the layout's
// example), else the first.
std::string job_frame(const json* frames) {
  if (!frames || !frames->is_array()) return "";
  auto render = [](const json& f) -> std::string {
    if (!f.is_object()) return "";
    std::string name = f.contains("name") && f["name"].is_string() ? f["name"].get<std::string>() : "?";
    std::string file = f.contains("filename") && f["filename"].is_string() ? f["filename"].get<std::string>() : "?";
    std::string line = f.contains("line") && f["line"].is_number_integer() ? std::to_string(f["line"].get<int64_t>()) : "?";
    return fmt::format("{} at {}:{}", name, file, line);
  };
  for (const json& f : *frames)
    if (f.is_object() && f.contains("filename") && f["filename"].is_string() &&
        f["filename"].get_ref<const std::string&>().find("torch/") == std::string::npos)
      return render(f);
  return frames->empty() ? "" : render(frames->front());
}

// "[0, 1, 2]" (pg_config's ranks, as ranks_str writes them) or a list.
bool parse_ranks(const json& v, std::vector<int64_t>& out) {
  out.clear();
  if (v.is_array()) {
    for (const json& r : v) {
      if (!r.is_number_integer()) return false;
      out.push_back(r.get<int64_t>());
    }
    return true;
  }
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  int64_t cur = 0;
  bool in_number = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      if (cur > (INT64_MAX - 9) / 10) return false;
      cur = cur * 10 + (c - '0');
      in_number = true;
    } else {
      if (c != '[' && c != ']' && c != ',' && c != ' ') return false;
      if (in_number) out.push_back(cur);
      cur = 0;
      in_number = false;
    }
  }
  if (in_number) out.push_back(cur);
  return true;
}

bool read_layout(const json& root, FlightRecorderDump& d, std::string& error) {
  if (!root.is_object()) {
    error = "FR004: the dump is " + describe_json_value(root) + ", not a dictionary";
    return false;
  }
  Fields top{root, "the dump's", error};
  if (!top.text("version", d.version) || !top.text("comm_lib_version", d.comm_lib_version)) return false;

  std::map<std::string, FlightRecorderGroup> groups;  // by name
  if (const json* cfg = top.find("pg_config")) {
    if (!cfg->is_object()) return top.bad("pg_config", "a dictionary");
    for (auto it = cfg->begin(); it != cfg->end(); ++it) {
      FlightRecorderGroup g;
      g.name = it.key();
      const json& v = it.value();
      if (v.is_object()) {
        Fields f{v, fmt::format("pg_config group '{}':", it.key().substr(0, 64)), error};
        if (!f.text("desc", g.desc)) return false;
        if (const json* r = f.find("ranks"); r && !parse_ranks(*r, g.ranks)) return f.bad("ranks", "a list of ranks");
      } else if (!parse_ranks(v, g.ranks)) {  // older releases: name -> ranks
        error = fmt::format("FR003: pg_config group '{}' is {}, not a group", it.key().substr(0, 64), describe_json_value(v));
        return false;
      }
      groups[g.name] = std::move(g);
    }
  }

  const json* entries = top.find("entries");
  if (entries && !entries->is_array()) return top.bad("entries", "a list");
  std::map<int64_t, std::pair<std::string, std::string>> id_names;
  if (entries) {
    size_t n = entries->size(), first = 0;
    if (n > limits::kFlightRecorderEntries) {
      first = n - limits::kFlightRecorderEntries;
      d.entries_dropped = first;
    }
    for (size_t i = first; i < n; ++i) {
      const json& e = (*entries)[i];
      if (!e.is_object()) {
        error = fmt::format("FR003: entry {} is {}, not a dictionary", i, describe_json_value(e));
        return false;
      }
      Fields f{e, fmt::format("entry {}:", i), error};
      FlightRecorderEntry x;
      std::optional<int64_t> seq, created;
      std::optional<bool> p2p;
      if (!f.integer("record_id", x.record_id) || !f.integer("pg_id", x.pg_id) || !f.integer("collective_seq_id", seq) ||
          !f.integer("p2p_seq_id", x.p2p_seq_id) || !f.integer("op_id", x.op_id) || !f.text("profiling_name", x.profiling_name) ||
          !f.text("state", x.state) || !f.integer("time_created_ns", created) || !f.integer("timeout_ms", x.timeout_ms) ||
          !f.boolean("is_p2p", p2p))
        return false;
      if (!seq && !f.integer("seq_id", seq)) return false;  // releases before 2.3
      x.collective_seq_id = seq.value_or(0);
      if (created && *created > 0) x.time_created_ns = created;
      if (const json* pg = f.find("process_group")) {
        if (!pg->is_array() || pg->size() != 2 || !(*pg)[0].is_string() || !(*pg)[1].is_string())
          return f.bad("process_group", "a (name, desc) pair");
        x.pg_name = (*pg)[0].get<std::string>();
        x.pg_desc = (*pg)[1].get<std::string>();
      }
      x.is_p2p = p2p.value_or(x.profiling_name.find(":send") != std::string::npos ||
                              x.profiling_name.find(":recv") != std::string::npos);
      if (x.state.empty()) x.state = "scheduled";
      if (x.state != "scheduled" && x.state != "started" && x.state != "completed")
        return f.bad("state", "scheduled, started or completed");
      if (!sizes_text(f.find("input_sizes"), x.input_sizes)) return f.bad("input_sizes", "a list of size lists");
      if (!sizes_text(f.find("output_sizes"), x.output_sizes)) return f.bad("output_sizes", "a list of size lists");
      x.frame = job_frame(f.find("frames"));
      if (x.pg_id >= 0 && !x.pg_name.empty()) id_names.emplace(x.pg_id, std::make_pair(x.pg_name, x.pg_desc));
      d.entries.push_back(std::move(x));
    }
  }
  for (const auto& [id, nd] : id_names) {
    FlightRecorderGroup& g = groups[nd.first];
    if (g.name.empty()) g.name = nd.first;
    if (g.desc.empty()) g.desc = nd.second;
    g.pg_id = id;
  }
  if (const json* st = top.find("pg_status")) {
    if (!st->is_object()) return top.bad("pg_status", "a dictionary");
    for (auto it = st->begin(); it != st->end(); ++it) {
      if (!it.value().is_object()) {
        error = fmt::format("FR003: pg_status '{}' is {}, not a dictionary", it.key().substr(0, 64), describe_json_value(it.value()));
        return false;
      }
      int64_t id = -1;
      try {
        id = std::stoll(it.key());
      } catch (...) {
        error = fmt::format("FR003: pg_status key '{}' is not a process group id", it.key().substr(0, 64));
        return false;
      }
      Fields f{it.value(), fmt::format("pg_status '{}':", id), error};
      FlightRecorderGroup* g = nullptr;
      for (auto& [name, grp] : groups)
        if (grp.pg_id == id) g = &grp;
      if (!g) {  // a group with no entry left in the buffer: named by its id
        FlightRecorderGroup& fresh = groups["#" + std::to_string(id)];
        fresh.pg_id = id;
        g = &fresh;
      }
      if (!f.integer("last_enqueued_collective", g->last_enqueued) || !f.integer("last_started_collective", g->last_started) ||
          !f.integer("last_completed_collective", g->last_completed))
        return false;
    }
  }
  for (auto& [name, g] : groups) {
    if (g.name.empty()) g.name = name;
    g.size = g.ranks.size();
    d.groups.push_back(std::move(g));
  }
  std::sort(d.groups.begin(), d.groups.end(), [](const FlightRecorderGroup& a, const FlightRecorderGroup& b) {
    return std::tie(a.pg_id, a.name) < std::tie(b.pg_id, b.name);
  });
  return true;
}

// A value that goes into a quoted field of a line: no quotes, no line breaks.
std::string quote_field(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 256)) out += (c == '"' || c == '\n' || c == '\r') ? '\'' : c;
  return "\"" + out + "\"";
}

std::string rank_list(const std::vector<int64_t>& ranks, const std::function<std::string(int64_t)>& node_of_rank) {
  constexpr size_t kShown = 64;
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < kShown; ++i) {
    if (i) out += ", ";
    out += std::to_string(ranks[i]);
    if (std::string node = node_of_rank ? node_of_rank(ranks[i]) : ""; !node.empty()) out += " (" + node + ")";
  }
  if (ranks.size() > kShown) out += fmt::format(" and {} more", ranks.size() - kShown);
  return out;
}

}  // namespace

int64_t flight_recorder_rank_from_name(std::string_view name) {
  size_t end = name.size();
  if (name.ends_with(".json") || name.ends_with(".pkl")) end = name.rfind('.');
  size_t b = end;
  while (b > 0 && name[b - 1] >= '0' && name[b - 1] <= '9') --b;
  if (b == end || end - b > 9) return -1;
  return std::stoll(std::string(name.substr(b, end - b)));
}

bool read_flight_recorder_dump(std::string bytes, int64_t rank, std::string host, std::string file, FlightRecorderDump& out,
                               std::string& error) {
  out = FlightRecorderDump{};
  out.rank = rank;
  out.host = std::move(host);
  out.file = std::move(file);
  json root;
  if (looks_like_pickle(bytes)) {
    PickleDocument doc;
    PickleError perr;
    if (!decode_pickle(std::move(bytes), doc, perr)) {
      error = perr.message;
      return false;
    }
    PickleToJson conv(doc);
    if (!conv.convert(doc.root(), root, error)) return false;
  } else {
    size_t first = bytes.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || bytes[first] != '{') {
      error = "FR005: neither a pickle (protocol 2 to 5) nor a JSON object: not a Flight Recorder dump";
      return false;
    }
    if (bytes.size() > limits::kPickleBytes) {
      error = fmt::format("FR005: the dump is {} bytes, more than the limit of {} (pickle_bytes)", bytes.size(), limits::kPickleBytes);
      return false;
    }
    JsonInputError jerr;
    if (!parse_json_input(bytes, root, jerr)) {
      error = "FR005: " + jerr.message;
      return false;
    }
  }
  return read_layout(root, out, error);
}

void FlightRecorderSet::add(FlightRecorderDump dump) {
  for (auto& g : dump.groups) {
    g.size = g.ranks.size();
    if (g.ranks.empty()) continue;
    auto& lists = lists_[g.name];
    if (std::find(lists.begin(), lists.end(), g.ranks) == lists.end()) {
      members_[g.name].insert(g.ranks.begin(), g.ranks.end());
      lists.push_back(std::move(g.ranks));
    }
    std::vector<int64_t>().swap(g.ranks);  // its memory too: `= {}` would keep the capacity
  }
  dumps_.push_back(std::move(dump));
}

std::vector<Observation> flight_recorder_observations(std::vector<FlightRecorderDump> dumps,
                                                      const std::function<std::string(int64_t)>& node_of_rank) {
  FlightRecorderSet set;
  for (auto& d : dumps) set.add(std::move(d));
  return set.observations(node_of_rank);
}

std::vector<Observation> FlightRecorderSet::observations(const std::function<std::string(int64_t)>& node_of_rank) const {
  std::set<int64_t> dumped;
  for (const auto& d : dumps_) dumped.insert(d.rank);
  // Each group's members without a dump, said once per group.
  std::map<std::string, std::string> absent_text;
  for (const auto& [name, ranks] : members_) {
    std::vector<int64_t> absent;
    for (int64_t r : ranks)
      if (!dumped.count(r)) absent.push_back(r);
    absent_text[name] = absent.empty() ? std::string("; every rank dumped")
                                       : fmt::format("; {} without a dump: {}", absent.size() == 1 ? "1 rank" : fmt::format("{} ranks", absent.size()),
                                                     rank_list(absent, node_of_rank));
  }
  const auto& dumps = dumps_;
  std::vector<const FlightRecorderDump*> order;
  for (const auto& d : dumps) order.push_back(&d);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return std::tie(a->rank, a->file) < std::tie(b->rank, b->file); });

  std::vector<Observation> out;
  for (const FlightRecorderDump* d : order) {
    int64_t line = 0;
    auto emit = [&](std::string text, std::optional<int64_t> ts) {
      Observation o;
      o.host = d->host;
      o.source = "flight_recorder";
      o.file = d->file;
      o.line = ++line;
      o.ts = ts;
      o.text = std::move(text);
      out.push_back(std::move(o));
    };
    emit(fmt::format("flight recorder: rank {} dump version {}{}: {} entries{}", d->rank, d->version.empty() ? "?" : d->version,
                     d->comm_lib_version.empty() ? "" : " (nccl " + d->comm_lib_version + ")", d->entries.size(),
                     d->entries_dropped ? fmt::format(" ({} older entries not read)", d->entries_dropped) : ""),
         std::nullopt);
    for (const auto& g : d->groups) {
      std::string text = fmt::format("flight recorder: rank {} process group {} {} (name {}, {})", d->rank, g.pg_id, quote_field(g.desc),
                                     quote_field(g.name), g.size == 0 ? std::string("ranks unknown") : fmt::format("{} ranks", g.size));
      std::vector<std::string> status;
      if (g.last_enqueued) status.push_back(fmt::format("last enqueued collective {}", *g.last_enqueued));
      if (g.last_started) status.push_back(fmt::format("last started {}", *g.last_started));
      if (g.last_completed) status.push_back(fmt::format("last completed {}", *g.last_completed));
      if (!status.empty()) text += ": " + fmt::format("{}", fmt::join(status, ", "));
      if (auto it = absent_text.find(g.name); it != absent_text.end()) text += it->second;
      emit(std::move(text), std::nullopt);
    }
    for (const auto& e : d->entries) {
      std::string text = fmt::format("flight recorder: rank {} process group {} {} {} #{} {} {}, input sizes {}, output sizes {}", d->rank,
                                     e.pg_id, quote_field(e.pg_desc), e.is_p2p ? "p2p" : "collective",
                                     e.is_p2p ? e.p2p_seq_id : e.collective_seq_id, e.profiling_name.empty() ? "?" : e.profiling_name,
                                     e.state, e.input_sizes, e.output_sizes);
      if (!e.frame.empty()) text += ", called from " + e.frame;
      emit(std::move(text), e.time_created_ns);
    }
  }
  return out;
}

}  // namespace culprit
