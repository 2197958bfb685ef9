#include "runtime/verdict_json.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/limits.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "runtime/collector_report_json.h"

namespace culprit {

namespace {
using J = nlohmann::ordered_json;

J time_or_null(const std::optional<int64_t>& t) { return t ? J(format_rfc3339(*t)) : J(nullptr); }

J value_json(const Value& v) { return value_to_json(v); }

J change_json(const std::optional<StateChange>& c) {
  if (!c) return nullptr;
  J j;
  j["rule"] = c->rule;
  j["reason"] = c->reason;
  j["cause"] = c->cause.empty() ? J(nullptr) : J(c->cause);
  return j;
}

J evidence_json(const Evidence& e) {
  J j;
  j["host"] = e.host;
  j["source"] = e.source;
  j["file"] = e.file;
  j["line"] = e.line;
  j["offset"] = e.offset;
  j["ts"] = time_or_null(e.ts);
  j["ts_origin"] = e.ts_origin.empty() ? J(nullptr) : J(e.ts_origin);
  j["text"] = e.text;
  return j;
}

const char* state_name(SymptomState s) {
  return s == SymptomState::Active ? "active" : s == SymptomState::Demoted ? "demoted" : "scrubbed";
}

// One recommended action (docs/recovery.md); a job action has `nodes`, a
// node action its `node` and `target`.
J action_json(const RecommendedAction& a) {
  J j;
  if (a.scope == "node") j["node"] = a.node;
  j["action"] = a.action;
  if (a.scope == "job") j["nodes"] = a.nodes;
  if (a.scope == "node") {
    J t = J::object();
    for (const auto& [k, val] : a.target) t[k] = val;
    j["target"] = std::move(t);
  }
  j["rule"] = a.rule.empty() ? J(nullptr) : J(a.rule);
  j["basis"] = a.basis;
  j["reason"] = a.reason;
  j["why"] = a.why;
  j["symptoms"] = a.symptoms;
  j["evidence"] = a.evidence;
  return j;
}

J recommendation_json(const Recommendation& r) {
  J j;
  j["job"] = action_json(r.job);
  J nodes = J::array();
  for (const auto& a : r.nodes) nodes.push_back(action_json(a));
  j["nodes"] = std::move(nodes);
  return j;
}

// The hang detail (runtime/hang_location.h): unknown parts are null.
J hang_json(const HangLocation& h) {
  J j;
  j["kind"] = h.kind;
  j["group"] = h.group ? J(*h.group) : J(nullptr);
  j["group_desc"] = h.group_desc.empty() ? J(nullptr) : J(h.group_desc);
  j["seq"] = h.seq ? J(*h.seq) : J(nullptr);
  j["op"] = h.op.empty() ? J(nullptr) : J(h.op);
  j["laggard_ranks"] = h.laggard_ranks;
  j["laggard_nodes"] = h.laggard_nodes;
  j["source"] = h.source;
  j["summary"] = h.summary;
  j["evidence"] = h.evidence;
  return j;
}

// The verdict is assembled in three parts so that write_verdict_json can
// stream the symptoms (the part that grows with the workload) one at a time.
J verdict_head(const Verdict& v, VerdictSchema schema) {
  J j;
  j["schema"] = schema == VerdictSchema::V1 ? kVerdictSchemaV1 : kVerdictSchema;
  J w;
  w["id"] = v.workload.workload_id;
  w["scheduler"] = v.workload.scheduler;
  w["start"] = time_or_null(v.workload.start);
  w["end"] = time_or_null(v.workload.end);
  w["nodes"] = v.workload.nodes;
  if (!v.workload.aliases.empty()) {
    J al = J::object();
    for (const auto& [node, list] : v.workload.aliases) al[node] = list;
    w["aliases"] = std::move(al);
  }
  j["workload"] = std::move(w);
  J t;
  t["state"] = v.workload.terminal.state.empty() ? J(nullptr) : J(v.workload.terminal.state);
  t["exit_code"] = v.workload.terminal.exit_code ? J(*v.workload.terminal.exit_code) : J(nullptr);
  j["terminal_state"] = std::move(t);
  const Outcome& o = v.outcome;
  j["status"] = o.status;
  j["domain"] = o.domain.empty() ? J(nullptr) : J(o.domain);
  j["sub_domain"] = o.sub_domain.empty() ? J(nullptr) : J(o.sub_domain);
  j["culprit_nodes"] = o.culprit_nodes;
  j["basis"] = o.basis;
  if (o.root_cause.empty()) {
    j["root_cause"] = nullptr;
  } else {
    J rc;
    rc["symptom"] = o.root_cause;
    rc["summary"] = o.root_cause_summary;
    j["root_cause"] = std::move(rc);
  }
  J cands = J::array();
  for (const auto& c : o.candidates) {
    J cj;
    cj["domain"] = c.domain;
    cj["sub_domain"] = c.sub_domain;
    cj["nodes"] = c.nodes;
    cj["symptoms"] = c.symptoms;
    cj["basis"] = c.basis;
    if (!c.generic_nodes.empty()) cj["generic_nodes"] = c.generic_nodes;
    if (!c.collected_on.empty()) cj["collected_on"] = c.collected_on;
    cands.push_back(std::move(cj));
  }
  j["candidates"] = std::move(cands);
  if (o.overridden_by.empty()) {
    j["outcome_override"] = nullptr;
  } else {
    J ov;
    ov["rule"] = o.overridden_by;
    ov["reason"] = o.override_reason;
    j["outcome_override"] = std::move(ov);
  }
  j["affected_nodes"] = v.affected_nodes;
  if (schema == VerdictSchema::V2) {
    j["hang"] = v.hang ? hang_json(*v.hang) : J(nullptr);
    j["recommendation"] = recommendation_json(v.recommendation);
  }
  return j;
}

// Every member of a symptom's JSON but its evidence, which comes last.
J symptom_json_head(const Symptom& s) {
  J sj;
  sj["id"] = s.id;
  sj["kind"] = s.kind_name;
  sj["node"] = s.node.empty() ? J(nullptr) : J(s.node);
  sj["control_plane"] = s.control_plane;
  sj["key"] = s.key.empty() ? J(nullptr) : J(s.key);
  sj["state"] = state_name(s.state);
  sj["summary"] = s.summary;
  sj["priority"] = s.priority;
  sj["first"] = time_or_null(s.first);
  sj["last"] = time_or_null(s.last);
  sj["count"] = s.count;
  sj["rule"] = s.rule;
  if (s.classification) {
    J c;
    c["domain"] = s.classification->first;
    c["sub_domain"] = s.classification->second;
    sj["classification"] = std::move(c);
  } else {
    sj["classification"] = nullptr;
  }
  sj["demoted_by"] = change_json(s.demoted_by);
  sj["scrubbed_by"] = change_json(s.scrubbed_by);
  std::vector<std::pair<std::string, const Value*>> fields;
  for (size_t i = 0; i < s.fields.size() && i < s.field_names.size(); ++i)
    if (!s.fields[i].is_null()) fields.emplace_back(s.field_names[i], &s.fields[i]);
  std::sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  J fj = J::object();
  for (const auto& [name, val] : fields) fj[name] = value_json(*val);
  sj["fields"] = std::move(fj);
  sj["evidence_total"] = s.evidence_total;
  return sj;
}

J symptom_json(const Symptom& s) {
  J sj = symptom_json_head(s);
  J ev = J::array();
  for (const auto& e : s.evidence) ev.push_back(evidence_json(e));
  sj["evidence"] = std::move(ev);
  return sj;
}

J verdict_tail(const Verdict& v, bool include_trail, VerdictSchema schema) {
  J j;
  J cov;
  J scope;
  scope["start"] = v.workload.start ? J(format_rfc3339(*v.workload.start - v.slack_before_ns)) : J(nullptr);
  scope["end"] = v.workload.end ? J(format_rfc3339(*v.workload.end + v.slack_after_ns)) : J(nullptr);
  scope["slack_before"] = format_duration(v.slack_before_ns);
  scope["slack_after"] = format_duration(v.slack_after_ns);
  cov["scope"] = std::move(scope);
  J sources = J::object();
  for (const auto& [name, sc] : v.coverage.sources) {
    J s;
    s["nodes_expected"] = sc.nodes_expected;
    s["nodes_with_data"] = sc.nodes_with_data;
    // At most limits::kCoverageNodeNames: this list repeats for every
    // source, so a large context without evidence would multiply its node
    // list by the number of sources. How many are missing stays exact:
    // nodes_expected minus the length of nodes_with_data (which lists only
    // nodes that sent evidence, so it grows with the request's evidence).
    s["nodes_missing"] = std::vector<std::string>(
        sc.nodes_missing.begin(), sc.nodes_missing.begin() + static_cast<std::ptrdiff_t>(
                                                               std::min(sc.nodes_missing.size(), limits::kCoverageNodeNames)));
    s["control_plane_hosts"] = sc.control_plane_hosts;
    s["files"] = sc.files;
    s["bytes_read"] = sc.bytes_read;
    s["lines_read"] = sc.lines_read;
    s["lines_out_of_scope"] = sc.lines_out_of_scope;
    s["events_without_time"] = sc.events_without_time;
    s["lines_invalid_utf8"] = sc.lines_invalid_utf8;
    s["lines_truncated"] = sc.lines_truncated;
    s["events"] = sc.events;
    s["events_out_of_scope"] = sc.events_out_of_scope;
    s["events_superseded"] = sc.events_superseded;
    s["events_rank_unplaced"] = sc.events_rank_unplaced;
    s["events_unplaced"] = sc.events_unplaced;
    s["errors"] = sc.errors;
    sources[name] = std::move(s);
  }
  cov["sources"] = std::move(sources);
  cov["nodes_without_logs"] = v.coverage.nodes_without_logs;
  cov["control_plane_hosts"] = v.coverage.control_plane_hosts;
  cov["ignored_files"] = v.coverage.ignored_files;
  // Present only when the evidence came through collectors (culprit run);
  // a bundle read from disk has none.
  if (!v.coverage.collectors.empty()) {
    J list = J::array();
    for (const auto& c : v.coverage.collectors) list.push_back(collector_report_to_json(c));
    cov["collectors"] = std::move(list);
  }
  if (!v.coverage.host_aliases.empty()) {
    J list = J::array();
    for (const auto& a : v.coverage.host_aliases) {
      J aj;
      aj["host"] = a.host;
      aj["node"] = a.node;
      aj["how"] = a.how;
      list.push_back(std::move(aj));
    }
    cov["host_aliases"] = std::move(list);
  }
  cov["warnings"] = v.coverage.warnings;
  j["coverage"] = std::move(cov);
  J eng;
  eng["culprit"] = v.engine.culprit_version;
  eng["evaluator"] = v.engine.evaluator;
  J cat;
  cat["name"] = v.engine.catalog_name;
  cat["version"] = v.engine.catalog_version;
  cat["digest"] = v.engine.catalog_digest;
  // Every part that contributed (the bundled catalog, site rules, ...);
  // name/version/digest above stay the whole catalog's for v1 readers.
  J parts = J::array();
  for (const auto& p : v.engine.catalog_parts) {
    J pj;
    pj["name"] = p.name;
    pj["version"] = p.version;
    pj["digest"] = p.digest;
    parts.push_back(std::move(pj));
  }
  cat["parts"] = std::move(parts);
  eng["catalog"] = std::move(cat);
  eng["hyperscan"] = v.engine.hyperscan_version;
  eng["re2"] = v.engine.re2_version;
  eng["antlr_runtime"] = v.engine.antlr_version;
  if (schema == VerdictSchema::V2)
    eng["recovery_table"] = v.engine.recovery_digest.empty() ? J(nullptr) : J(v.engine.recovery_digest);
  j["engine"] = std::move(eng);
  if (include_trail) {
    J tr = J::array();
    for (const auto& e : v.trail) {
      J tj;
      tj["stage"] = e.stage;
      tj["rule"] = e.rule;
      tj["action"] = e.action;
      tj["target"] = e.target;
      tj["detail"] = e.detail;
      if (!e.rule_at.empty()) tj["rule_at"] = e.rule_at;
      tr.push_back(std::move(tj));
    }
    j["trail"] = std::move(tr);
    j["silent_extractors"] = v.coverage.silent_extractors;
  }
  return j;
}

// A JSON string as nlohmann's dump (ensure_ascii off) writes it: quotes,
// backslashes and control characters escaped, UTF-8 as is. One pass: the
// bytes that need a look (controls, '"', '\\', non-ASCII) are found 16 at a
// time, and a non-ASCII byte is checked as the start of a UTF-8 sequence
// there. Text that is not valid UTF-8 (never expected: evidence is
// sanitized when scanned) goes through nlohmann itself, for its replacement
// of the invalid bytes.
void append_json_string(std::string& out, std::string_view s) {
  const size_t start = out.size();
  out += '"';
  size_t run = 0;  // start of the bytes not yet copied
  size_t i = 0;
  while (i < s.size()) {
#ifdef __SSE2__
    while (i + 16 <= s.size()) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
      const __m128i ctl = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));  // x <= 0x1f
      const __m128i special = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
      // The high bit of each byte is its own mask bit: non-ASCII bytes are flagged too.
      const int mask = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(ctl, special), x));
      if (mask != 0) {
        i += static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
        break;
      }
      i += 16;
    }
    if (i >= s.size()) break;
#endif
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const int n = utf8_sequence_length(s, i);
      if (n < 0) {
        out.resize(start);
        out += J(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
      }
      i += static_cast<size_t>(n);
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out.append(s.data() + run, i - run);
    run = ++i;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

// `<lead>"name": ` (lead: the newline and indentation dump(2) puts before a key).
void append_key(std::string& out, std::string_view lead, std::string_view name) {
  out += lead;
  out += '"';
  out += name;
  out += "\": ";
}

// An integer as dump() writes it, without a string of its own.
void append_int(std::string& out, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// A time as the JSON string format_rfc3339 gives, without a string of its own.
void append_time(std::string& out, int64_t ns) {
  char buf[kRfc3339MaxBytes + 2];
  buf[0] = '"';
  const size_t n = format_rfc3339_to(ns, buf + 1);
  buf[n + 1] = '"';
  out.append(buf, n + 2);
}

// A symptom's evidence array as dump(2) prints it, the "evidence" key at
// column `indent`: written directly, since evidence is most of a large
// verdict (up to 20 items per symptom) and building a JSON tree for each
// item cost more than everything else in the output.
void append_evidence(std::string& out, const std::vector<Evidence>& evidence, size_t indent) {
  out += "\"evidence\": ";
  if (evidence.empty()) {
    out += "[]";
    return;
  }
  const std::string item(indent + 2, ' '), field(indent + 4, ' ');
  out += "[";
  for (size_t i = 0; i < evidence.size(); ++i) {
    const Evidence& e = evidence[i];
    out += i ? ",\n" : "\n";
    out += item;
    out += "{\n";
    auto key = [&](std::string_view name) { append_key(out, field, name); };
    key("host");
    append_json_string(out, e.host);
    out += ",\n";
    key("source");
    append_json_string(out, e.source);
    out += ",\n";
    key("file");
    append_json_string(out, e.file);
    out += ",\n";
    key("line");
    append_int(out, e.line);
    out += ",\n";
    key("offset");
    append_int(out, e.offset);
    out += ",\n";
    key("ts");
    if (e.ts) append_time(out, *e.ts);
    else out += "null";
    out += ",\n";
    key("ts_origin");
    if (e.ts_origin.empty()) out += "null";
    else append_json_string(out, e.ts_origin);
    out += ",\n";
    key("text");
    append_json_string(out, e.text);
    out += "\n";
    out += item;
    out += "}";
  }
  out += "\n";
  out += std::string(indent, ' ');
  out += "]";
}

// A symptom as dump(2) prints symptom_json(s) at 4 spaces of nesting (an
// item of the "symptoms" array), written directly for the same reason as
// its evidence: a verdict of 100,000 symptoms spent most of its output time
// building and dumping a tree per symptom. Key order and number forms are
// symptom_json_head's (floats go through nlohmann, for its shortest form).
void append_symptom(std::string& out, const Symptom& s) {
  const char* const field = "\n      ";
  auto key = [&](std::string_view name) { append_key(out, field, name); };
  auto str_or_null = [&](std::string_view v, bool null) {
    if (null) out += "null";
    else append_json_string(out, v);
  };
  auto time_or_null_text = [&](const std::optional<int64_t>& t) {
    if (t) append_time(out, *t);
    else out += "null";
  };
  auto change = [&](const std::optional<StateChange>& c) {
    if (!c) {
      out += "null";
      return;
    }
    out += "{\n        \"rule\": ";
    append_json_string(out, c->rule);
    out += ",\n        \"reason\": ";
    append_json_string(out, c->reason);
    out += ",\n        \"cause\": ";
    str_or_null(c->cause, c->cause.empty());
    out += "\n      }";
  };
  out += "{";
  key("id");
  append_json_string(out, s.id);
  out += ',';
  key("kind");
  append_json_string(out, s.kind_name);
  out += ',';
  key("node");
  str_or_null(s.node, s.node.empty());
  out += ',';
  key("control_plane");
  out += s.control_plane ? "true" : "false";
  out += ',';
  key("key");
  str_or_null(s.key, s.key.empty());
  out += ',';
  key("state");
  append_json_string(out, state_name(s.state));
  out += ',';
  key("summary");
  append_json_string(out, s.summary);
  out += ',';
  key("priority");
  append_int(out, s.priority);
  out += ',';
  key("first");
  time_or_null_text(s.first);
  out += ',';
  key("last");
  time_or_null_text(s.last);
  out += ',';
  key("count");
  append_int(out, s.count);
  out += ',';
  key("rule");
  append_json_string(out, s.rule);
  out += ',';
  key("classification");
  if (s.classification) {
    out += "{\n        \"domain\": ";
    append_json_string(out, s.classification->first);
    out += ",\n        \"sub_domain\": ";
    append_json_string(out, s.classification->second);
    out += "\n      }";
  } else {
    out += "null";
  }
  out += ',';
  key("demoted_by");
  change(s.demoted_by);
  out += ',';
  key("scrubbed_by");
  change(s.scrubbed_by);
  out += ',';
  key("fields");
  std::vector<std::pair<std::string_view, const Value*>> fields;
  for (size_t i = 0; i < s.fields.size() && i < s.field_names.size(); ++i)
    if (!s.fields[i].is_null()) fields.emplace_back(s.field_names[i], &s.fields[i]);
  std::sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (fields.empty()) {
    out += "{}";
  } else {
    out += '{';
    for (size_t i = 0; i < fields.size(); ++i) {
      out += i ? ",\n        " : "\n        ";
      append_json_string(out, fields[i].first);
      out += ": ";
      const Value& v = *fields[i].second;
      switch (v.type) {
        case Type::Bool: out += v.b ? "true" : "false"; break;
        case Type::Int: append_int(out, v.i); break;
        case Type::Float: out += J(v.f).dump(); break;
        case Type::String: append_json_string(out, v.s); break;
        case Type::Time: append_time(out, v.i); break;
        case Type::Duration: append_json_string(out, format_duration(v.i)); break;
        case Type::Null: out += "null"; break;
      }
    }
    out += "\n      }";
  }
  out += ',';
  key("evidence_total");
  append_int(out, s.evidence_total);
  out += ",\n      ";
  append_evidence(out, s.evidence, 6);
  out += "\n    }";
}

// `j` as dump(2) would print it at `indent` spaces of nesting: JSON strings
// never hold a raw newline, so every '\n' of the dump starts a line.
void write_nested(std::ostream& out, const J& j, size_t indent) {
  const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string indented;
  indented.reserve(text.size() + text.size() / 8);
  size_t from = 0;
  for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
    indented.append(text, from, nl + 1 - from);
    indented.append(indent, ' ');
  }
  indented.append(text, from, std::string::npos);
  out.write(indented.data(), static_cast<std::streamsize>(indented.size()));
}
}  // namespace

bool parse_verdict_schema(const std::string& text, VerdictSchema& out) {
  if (text == "v2" || text == "2" || text == kVerdictSchema) out = VerdictSchema::V2;
  else if (text == "v1" || text == "1" || text == kVerdictSchemaV1) out = VerdictSchema::V1;
  else return false;
  return true;
}

nlohmann::ordered_json value_to_json(const Value& v) {
  switch (v.type) {
    case Type::Null: return nullptr;
    case Type::Bool: return v.b;
    case Type::Int: return v.i;
    case Type::Float: return v.f;
    case Type::String: return v.s;
    case Type::Time: return format_rfc3339(v.i);
    case Type::Duration: return format_duration(v.i);
  }
  return nullptr;
}

nlohmann::ordered_json verdict_to_json(const Verdict& v, bool include_trail, VerdictSchema schema) {
  J j = verdict_head(v, schema);
  J syms = J::array();
  for (const auto& s : v.symptoms) syms.push_back(symptom_json(s));
  j["symptoms"] = std::move(syms);
  J tail = verdict_tail(v, include_trail, schema);
  for (auto& [key, value] : tail.items()) j[key] = std::move(value);
  return j;
}

std::string verdict_to_json_text(const Verdict& v, bool include_trail, VerdictSchema schema) {
  // Evidence text is sanitized at scan time; `replace` is a last guard so a
  // stray invalid byte can never make serialization throw.
  return verdict_to_json(v, include_trail, schema).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void write_verdict_json(std::ostream& out, const Verdict& v, bool include_trail, VerdictSchema schema) {
  // The same bytes as verdict_to_json_text, written member by member (and
  // symptom by symptom) so that the whole document never exists in memory.
  bool first = true;
  auto member = [&](const std::string& key, const J& value) {
    out << (first ? "{\n  " : ",\n  ") << J(key).dump() << ": ";
    first = false;
    write_nested(out, value, 2);
  };
  const J head = verdict_head(v, schema);
  for (const auto& [key, value] : head.items()) member(key, value);
  out << (first ? "{\n  " : ",\n  ") << "\"symptoms\": ";
  first = false;
  if (v.symptoms.empty()) {
    out << "[]";
  } else {
    // Symptoms are written a megabyte at a time: one symptom is a few
    // kilobytes, and writing each to the stream cost a system call (a
    // 447 MB verdict made 100,000 of them).
    constexpr size_t kFlushBytes = size_t{1} << 20;
    std::string text;
    text.reserve(kFlushBytes + kFlushBytes / 4);
    text += "[\n    ";
    for (size_t i = 0; i < v.symptoms.size(); ++i) {
      if (i) text += ",\n    ";
      append_symptom(text, v.symptoms[i]);
      if (text.size() >= kFlushBytes) {
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        text.clear();
      }
    }
    text += "\n  ]";
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  const J tail = verdict_tail(v, include_trail, schema);
  for (const auto& [key, value] : tail.items()) member(key, value);
  out << "\n}\n";
}

}  // namespace culprit
