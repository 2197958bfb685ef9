// Semantic analysis, declarations pass and driver: catalog headers, duplicate
// names, the event and symptom kinds and their field schemas; then the other
// passes (sema_extractors.cpp, sema_rules.cpp, sema_scenarios.cpp) in order.

#include "compiler/sema_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/suggest.h"
#include "base/text_util.h"

namespace culprit::sema_internal {

// The kinds of one category, for suggestions: by name, so the choice is
// deterministic.
std::vector<std::string> Analyzer::kind_names(bool symptom) const {
  std::vector<std::string> out;
  for (const auto& [name, id] : symptom ? symptom_ids_ : event_ids_) out.push_back(name);
  return out;
}

// Every family ("nccl.*", "gpu.xid.*") the kinds of one category form.
std::vector<std::string> Analyzer::family_patterns(bool symptom) const {
  std::set<std::string> fams;
  for (const auto& [name, id] : symptom ? symptom_ids_ : event_ids_)
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
      fams.insert(name.substr(0, dot) + ".*");
  fams.insert("*");
  return {fams.begin(), fams.end()};
}

int32_t Analyzer::field_name_id(const std::string& n) {
  auto [it, inserted] = field_ids_.emplace(n, static_cast<int32_t>(cat_.field_names.size()));
  if (inserted) cat_.field_names.push_back(n);
  return it->second;
}

int32_t Analyzer::register_kind(bool symptom, const std::string& name) {
  auto& ids = symptom ? symptom_ids_ : event_ids_;
  auto& kinds = symptom ? cat_.symptom_kinds : cat_.event_kinds;
  auto [it, inserted] = ids.emplace(name, static_cast<int32_t>(kinds.size()));
  if (inserted) kinds.push_back(ir::KindSchema{name, {}, {}});
  return it->second;
}

// Adds (or checks) a field of a kind's schema; returns its slot or -1.
int32_t Analyzer::add_field(bool symptom, int32_t kind, const std::string& field, Type type, const SourceRange& where) {
  auto& schema = (symptom ? cat_.symptom_kinds : cat_.event_kinds)[static_cast<size_t>(kind)];
  for (const auto& b : symptom ? std::vector<EventBuiltinDef>(std::begin(kSymptomBuiltins), std::end(kSymptomBuiltins))
                               : std::vector<EventBuiltinDef>(std::begin(kEventBuiltins), std::end(kEventBuiltins))) {
    if (field == b.name) {
      err("E0103", where, fmt::format("field '{}' is built into every {}; choose another name", field,
                                      symptom ? "symptom" : "event"));
      return -1;
    }
  }
  int32_t id = field_name_id(field);
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    if (schema.fields[i].name_id != id) continue;
    auto& def = schema.fields[i];
    if (def.type == Type::Null) def.type = type;
    else if (type != Type::Null && def.type != type)
      err("E0303", where, fmt::format("field '{}' of '{}' is {} here but {} where it was first given", field,
                                      schema.name, type_name(type), type_name(def.type)));
    return static_cast<int32_t>(i);
  }
  schema.fields.push_back({field, id, type});
  if (schema.slot_of_name.size() <= static_cast<size_t>(id)) schema.slot_of_name.resize(static_cast<size_t>(id) + 1, -1);
  schema.slot_of_name[static_cast<size_t>(id)] = static_cast<int32_t>(schema.fields.size() - 1);
  return static_cast<int32_t>(schema.fields.size() - 1);
}

std::vector<int32_t> Analyzer::resolve_kinds(bool symptom, const std::string& pattern, const SourceRange& where) {
  std::vector<int32_t> out;
  const auto& ids = symptom ? symptom_ids_ : event_ids_;
  for (const auto& [name, id] : ids)
    if (glob_kind_match(pattern, name)) out.push_back(id);
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    bool wildcard = pattern.find('*') != std::string::npos;
    std::string help = did_you_mean(pattern, wildcard ? family_patterns(symptom) : kind_names(symptom));
    // A kind of the other category is a common slip: `event` for `symptom`.
    if (help.empty() && !wildcard && (symptom ? event_ids_ : symptom_ids_).count(pattern))
      help = fmt::format("'{}' is {} kind; query it with '{}'", pattern, symptom ? "an event" : "a symptom",
                         symptom ? "event" : "symptom");
    err(wildcard ? "E0203" : "E0201", where,
        wildcard ? fmt::format("{} pattern '{}' matches no {} kind this catalog creates", symptom ? "symptom" : "event",
                               pattern, symptom ? "symptom" : "event")
                 : fmt::format("unknown {} kind '{}'", symptom ? "symptom" : "event", pattern),
        help);
  }
  return out;
}

ir::Catalog Analyzer::run(std::vector<CatalogPart>& parts) {
  // Built-in event kind for metric samples (observations with a value).
  cat_.metric_kind = register_kind(false, "metric.sample");
  SourceRange none;
  add_field(false, cat_.metric_kind, "name", Type::String, none);
  add_field(false, cat_.metric_kind, "value", Type::Float, none);
  add_field(false, cat_.metric_kind, "labels", Type::String, none);

  bool first_header = true;
  std::map<std::string, SourceRange> extractor_names, rule_names, scenario_names;
  for (auto& part : parts) {
    const ast::CatalogHeader* header = nullptr;
    for (auto& f : part.files) {
      cat_.sources.push_back(f.source);
      if (f.catalog) {
        if (header) {
          err("E0102", f.catalog->where, fmt::format("a second catalog header in one rule directory (first: {}:{})",
                                                     header->where.file->path, header->where.line));
        } else {
          header = &*f.catalog;
          if (first_header) {
            cat_.name = header->name;
            cat_.version = header->version;
            first_header = false;
          }
        }
      }
      auto dup = [&](std::map<std::string, SourceRange>& seen, const std::string& name, const SourceRange& w, const char* what) {
        auto [it, inserted] = seen.emplace(name, w);
        if (!inserted)
          err("E0101", w, fmt::format("{} '{}' is already defined at {}:{}", what, name, it->second.file->path, it->second.line));
        return inserted;
      };
      for (const auto& x : f.extractors) dup(extractor_names, x.name, x.where, "extractor");
      for (const auto& r : f.rules) dup(rule_names, r.name, r.where, "rule");
      for (const auto& s : f.scenarios) dup(scenario_names, s.title, s.where, "scenario");
    }
  }
  // Tables before anything reads them: a lookup or a regex may name a table
  // of any file of the catalog.
  for (auto& part : parts)
    for (auto& f : part.files)
      for (const auto& t : f.tables) analyze_table(t);
  // Kinds first, so queries may name a kind a later rule creates.
  for (auto& part : parts)
    for (auto& f : part.files) {
      for (const auto& x : f.extractors)
        if (x.has_emit) register_kind(false, x.emit_kind);
      for (const auto& r : f.rules) register_rule_kinds(r);
    }
  for (auto& part : parts)
    for (auto& f : part.files)
      for (const auto& x : f.extractors) analyze_extractor(x);
  check_source_names(parts);

  // Rules are typed in evaluation order (stage, then catalog order) so the
  // fields a rule creates are known to the rules that run after it.
  std::vector<std::pair<const ast::Rule*, int32_t>> order;
  int32_t index = 0;
  for (auto& part : parts)
    for (auto& f : part.files)
      for (const auto& r : f.rules) order.emplace_back(&r, index++);
  auto stage_of = [](const std::string& s) {
    for (size_t i = 0; i < ir::kStageNames.size(); ++i)
      if (s == ir::kStageNames[i]) return static_cast<int>(i);
    return 99;
  };
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return stage_of(a.first->stage) < stage_of(b.first->stage);
  });
  for (const auto& [r, i] : order) analyze_rule(*r, i);
  for (auto& part : parts)
    for (auto& f : part.files)
      for (const auto& s : f.scenarios) analyze_scenario(s);
  return std::move(cat_);
}

}  // namespace culprit::sema_internal

namespace culprit {

ir::Catalog analyze(std::vector<CatalogPart>& parts, Diagnostics& diags) {
  sema_internal::Analyzer a(diags);
  return a.run(parts);
}

}  // namespace culprit
