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

void Analyzer::check_source_names(const std::vector<CatalogPart>& parts) {
  // Any source name is allowed (a site's own `logs/<host>/<source>.log`), so
  // only a near miss is reported: `from apps` when the catalog reads `app`
  // elsewhere compiles, passes its own line tests, and never sees a line.
  // The source it is near must be read by more extractors than it is, so a
  // pair of sites' names used equally often stays silent.
  std::map<std::string, size_t> readers;
  for (const auto& part : parts)
    for (const auto& f : part.files)
      for (const auto& x : f.extractors)
        for (const auto& [src, where] : x.sources) ++readers[src];
  std::vector<std::string> names;
  for (const auto& [src, n] : readers) names.push_back(src);
  for (const auto& part : parts)
    for (const auto& f : part.files)
      for (const auto& x : f.extractors)
        for (const auto& [src, where] : x.sources) {
          auto near = closest_match(src, names);
          if (!near || readers[*near] <= readers[src]) continue;
          diags_.warning("E0208", where,
                         fmt::format("source '{}' is read by {} extractor{} and '{}' by {}: a misspelt source reads "
                                     "logs/<host>/{}.log, a file bundles do not have, and never sees a line",
                                     src, readers[src], readers[src] == 1 ? "" : "s", *near, readers[*near], src),
                         fmt::format("did you mean '{}'?", *near));
        }
}


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

// One error per regex: a limit's when one is exceeded (then neither engine
// ran), else RE2's when it rejects it (it runs first and says where;
// Hyperscan is not asked then), else Hyperscan's. `in_literal`: the
// engines' offsets are offsets into the literal at `where`.
bool Analyzer::report_regex(const RegexCheck& check, const SourceRange& where, bool in_literal, const std::string& what) {
  if (!check.limit_error.empty()) {
    err(check.limit_code.c_str(), where, check.limit_error);
    return false;
  }
  if (!check.re2_error.empty()) {
    SourceRange at = where;
    if (in_literal && check.re2_error_offset >= 0)
      at = literal_sub_range(at, static_cast<size_t>(check.re2_error_offset),
                             static_cast<size_t>(check.re2_error_offset + std::max<int64_t>(1, check.re2_error_length)), false);
    err("E0402", at, fmt::format("RE2 rejects {}: {}", what, check.re2_error), regex_help(check));
    return false;
  }
  if (!check.hyperscan_error.empty()) {
    SourceRange at = where;
    if (in_literal && check.hyperscan_error_offset >= 0)
      at = literal_sub_range(at, static_cast<size_t>(check.hyperscan_error_offset),
                             static_cast<size_t>(check.hyperscan_error_offset + 1), false);
    err("E0401", at, fmt::format("Hyperscan rejects {}: {}", what, check.hyperscan_error), regex_help(check));
    return false;
  }
  return true;
}

// A capture name in an extractor with several `match` clauses reads the
// group of whichever clause matched: the groups of the other clauses took
// no part in the match and are null, so it is the coalesce of its groups.
// Every clause must name it (E0405): a field that is silently null for one
// spelling of the line is a mistake no test of the other spelling shows.
// nullopt when no clause names it (the caller reports E0403).
std::optional<ir::Expr> Analyzer::capture_of_clauses(const ast::Expr& x, const Scope& s) {
  const auto& names = *s.captures;
  const auto& clauses = *s.match_clauses;
  std::vector<bool> named(clauses.size(), false);
  auto e = make(Op::Call, Type::String, x.where);
  e.a = static_cast<int32_t>(ir::Builtin::Coalesce);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != x.text) continue;
    auto c = make(Op::Capture, Type::String, x.where);
    c.a = static_cast<int32_t>(i);
    e.kids.push_back(std::move(c));
    named[static_cast<size_t>((*s.capture_clause)[i])] = true;
  }
  if (e.kids.empty()) return std::nullopt;
  if (s.captures_unknown) return bad(x.where);  // a clause was rejected: its groups are not known
  std::vector<DiagnosticNote> notes;
  for (size_t k = 0; k < clauses.size(); ++k)
    if (!named[k]) notes.push_back({clauses[k].range, fmt::format("this 'match' has no group named '{}'", x.text)});
  if (!notes.empty()) {
    // The message is formatted before `notes` is moved into the call.
    std::string msg = fmt::format("'{}' is not a named capture of every 'match' of this extractor ({} of {} do not name it)",
                                  x.text, notes.size(), clauses.size());
    diags_.error("E0405", x.where, std::move(msg),
                 fmt::format("a field is computed from whichever 'match' took the line: name a group (?<{}>...) in "
                             "each of them, or give the other spelling an extractor of its own",
                             x.text),
                 std::move(notes));
    return bad(x.where);
  }
  return e;
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
  out.keep_last = x.keep_last;
  if (x.matches.empty() || !x.has_emit) {
    err("E0404", x.where, fmt::format("extractor '{}' needs a 'match' regex and an 'emit'", x.name));
    return;
  }
  // Each clause is checked on its own, so that an error points into the
  // regex that has it. One clause is the extractor's pattern as written;
  // several are compiled to one (compiler/regex_check.h, MatchUnion) whose
  // groups are the clauses' groups, clause after clause.
  const bool several = x.matches.size() > 1;
  std::vector<MatchClauseRegex> clauses;
  std::vector<int32_t> clause_of;  // capture index -> clause, with several clauses
  bool regex_ok = true;
  for (size_t i = 0; i < x.matches.size(); ++i) {
    const auto& m = x.matches[i];
    // (?&TABLE.COLUMN) becomes the column's values (sema_tables.cpp); the
    // engines then see the expanded pattern, whose offsets are not the
    // literal's, so their errors point at the whole regex.
    auto expanded = expand_table_refs(m.regex, m.range);
    if (!expanded) regex_ok = false;
    clauses.push_back(clause_regex(expanded ? *expanded : m.regex, m.flags));
    const auto& c = clauses.back();
    auto check = check_regex(c.pattern, c.caseless, c.dotall);
    regex_ok = expanded && report_regex(check, m.range, *expanded == m.regex, "this regex") && regex_ok;
    if (!several) {
      out.pattern = c.pattern;
      out.caseless = c.caseless;
      out.dotall = c.dotall;
      out.re2_pattern = check.re2_pattern;
      out.capture_names = check.capture_names;
    }
    if (several)
      for (const auto& name : check.capture_names) {
        out.capture_names.push_back(name);
        clause_of.push_back(static_cast<int32_t>(i));
      }
  }
  if (several) {
    auto u = match_union(clauses);
    out.pattern = u.pattern;
    out.re2_pattern = u.re2_pattern;
    out.caseless = u.caseless;
    out.dotall = u.dotall;
    // Clauses each within the limits may not be together (the limits add up).
    if (regex_ok)
      regex_ok = report_regex(check_regex(u.pattern, u.caseless, u.dotall), x.where, false,
                              fmt::format("the {} 'match' clauses of '{}' together", x.matches.size(), x.name));
  }
  out.kind = register_kind(false, x.emit_kind);

  Scope s;
  s.captures = &out.capture_names;
  s.captures_unknown = !regex_ok;
  if (several) {
    s.capture_clause = &clause_of;
    s.match_clauses = &x.matches;
  }
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
