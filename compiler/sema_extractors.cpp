// Semantic analysis, extractors pass: each extractor's regex is checked by
// both engines, its emitted fields typed against the captures, and its
// inline line tests checked against what it emits.

#include "compiler/sema_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/suggest.h"
#include "base/timestamp.h"

namespace culprit::sema_internal {

// What to write instead of a regex neither engine can run.
std::string Analyzer::regex_help(const RegexCheck& c) {
  const std::string& e = c.re2_error.empty() ? c.hyperscan_error : c.re2_error;
  if (e.find("(?!") != std::string::npos || e.find("(?=") != std::string::npos || e.find("(?<") != std::string::npos ||
      e.find("Zero-width") != std::string::npos)
    return "look-around is not supported: match the line and exclude the rest with a 'where' (not (e.text matches /.../))";
  if (e.find("\\1") != std::string::npos || e.find("Back-reference") != std::string::npos)
    return "back-references are not supported: capture both parts and compare them in a 'where'";
  if (e.find("repetition size") != std::string::npos) return "repeat counts are limited to 1000";
  if (e.find("empty buffer") != std::string::npos)
    return "this regex matches an empty line, so every line would be a candidate: make some part of it required";
  return {};
}

void Analyzer::analyze_extractor(const ast::Extractor& x) {
  ir::Extractor out;
  out.name = x.name;
  out.where = x.where;
  for (const auto& [src, r] : x.sources) out.sources.push_back(src);
  std::sort(out.sources.begin(), out.sources.end());
  out.sources.erase(std::unique(out.sources.begin(), out.sources.end()), out.sources.end());
  out.keep_before_ns = x.keep_before_ns;
  out.keep_after_ns = x.keep_after_ns;
  if (!x.has_match || !x.has_emit) {
    err("E0404", x.where, fmt::format("extractor '{}' needs a 'match' regex and an 'emit'", x.name));
    return;
  }
  out.pattern = x.regex;
  out.caseless = x.regex_flags.find('i') != std::string::npos;
  out.dotall = x.regex_flags.find('s') != std::string::npos;
  auto check = check_regex(x.regex, out.caseless, out.dotall);
  // One error per regex: a limit's when one is exceeded (then neither
  // engine ran), else RE2's when it rejects it (it runs first and says
  // where; Hyperscan is not asked then), else Hyperscan's.
  if (!check.limit_error.empty()) {
    err(check.limit_code.c_str(), x.regex_range, check.limit_error);
  } else if (!check.re2_error.empty()) {
    SourceRange at = x.regex_range;
    if (check.re2_error_offset >= 0)
      at = literal_sub_range(at, static_cast<size_t>(check.re2_error_offset),
                             static_cast<size_t>(check.re2_error_offset + std::max<int64_t>(1, check.re2_error_length)), false);
    err("E0402", at, fmt::format("RE2 rejects this regex: {}", check.re2_error), regex_help(check));
  } else if (!check.hyperscan_error.empty()) {
    SourceRange at = x.regex_range;
    if (check.hyperscan_error_offset >= 0)
      at = literal_sub_range(at, static_cast<size_t>(check.hyperscan_error_offset),
                             static_cast<size_t>(check.hyperscan_error_offset + 1), false);
    err("E0401", at, fmt::format("Hyperscan rejects this regex: {}", check.hyperscan_error), regex_help(check));
  }
  out.re2_pattern = check.re2_pattern;
  out.capture_names = check.capture_names;
  out.kind = register_kind(false, x.emit_kind);

  Scope s;
  s.captures = &out.capture_names;
  s.captures_unknown = !check.re2_error.empty() || !check.hyperscan_error.empty() || !check.limit_error.empty();
  int32_t slots = 0;
  std::vector<bool> slot_types;
  s.next_slot = &slots;
  s.slot_is_symptom = &slot_types;
  std::set<std::string> seen;
  std::map<std::string, int32_t> emitted;  // field -> slot
  for (const auto& f : x.emit_fields) {
    if (!seen.insert(f.name).second) {
      err("E0103", f.where, fmt::format("field '{}' is given twice", f.name));
      continue;
    }
    auto v = lower(*f.value, s);
    int32_t slot = add_field(false, out.kind, f.name, v.type, f.where);
    if (slot < 0) continue;
    emitted[f.name] = slot;
    out.fields.push_back({slot, std::move(v)});
  }

  bool has_positive = false, has_negative = false;
  for (const auto& t : x.tests) {
    ir::LineTest lt;
    lt.title = t.title;
    lt.where = t.where;
    lt.line = t.line;
    lt.expect_none = t.expect_none;
    if (t.expect_none) {
      has_negative = true;
    } else {
      has_positive = true;
      if (t.expect_kind != x.emit_kind) {
        err("E0504", t.expect_range, fmt::format("this test expects '{}' but extractor '{}' emits '{}'", t.expect_kind, x.name, x.emit_kind));
        continue;
      }
      for (const auto& f : t.fields) {
        auto it = emitted.find(f.name);
        if (it == emitted.end()) {
          std::vector<std::string> names;
          for (const auto& [n, slot] : emitted) names.push_back(n);
          err("E0502", f.where, fmt::format("extractor '{}' does not emit a field '{}'", x.name, f.name), did_you_mean(f.name, names));
          continue;
        }
        auto c = constant_of(*f.value);
        if (!c) {
          err("E0301", f.value->where, "an expected field value must be a literal");
          continue;
        }
        Type ft = cat_.event_kinds[static_cast<size_t>(out.kind)].fields[static_cast<size_t>(it->second)].type;
        if (ft == Type::Time && c->type == Type::String) {
          auto ns = parse_rfc3339(c->s);
          if (!ns) {
            err("E0301", f.value->where, "expected time must be an RFC 3339 string");
            continue;
          }
          *c = Value::time(*ns);
        } else if (c->type != Type::Null && c->type != ft && !(numeric(c->type) && numeric(ft))) {
          err("E0301", f.value->where, fmt::format("field '{}' is {} but the test expects a {}", f.name, type_name(ft), type_name(c->type)));
          continue;
        }
        lt.expected.emplace_back(it->second, *c);
      }
    }
    out.tests.push_back(std::move(lt));
  }
  if (!has_positive || !has_negative)
    err("E0501", x.where, fmt::format("extractor '{}' needs at least one must-match test (expect KIND) and one must-not-match test (expect none); it has {}",
                                      x.name, has_positive ? "no must-not-match test" : has_negative ? "no must-match test" : "no tests"));
  cat_.extractors.push_back(std::move(out));
}

}  // namespace culprit::sema_internal
