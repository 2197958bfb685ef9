// Internal to semantic analysis (compiler/sema*.cpp); not part of the
// compiler's interface, which is compiler/sema.h.
//
// The Analyzer holds the state every pass shares: the catalog being built,
// the kind and field name tables, and the queries of the rule being
// analyzed. Each pass defines its members in its own file:
//   sema.cpp             driver, catalog headers, duplicate names, kinds and field schemas
//   sema_tables.cpp      tables: their checks, lookup(), (?&TABLE.COLUMN) in regexes
//   sema_expr.cpp        expressions: names, fields, operators, calls, queries, interpolation
//   sema_order.cpp       temporal order (`Y before X`, docs/language.md §6.1)
//   sema_extractors.cpp  extractors: regexes, emitted fields, line tests
//   sema_rules.cpp       rules: stages, bindings, conditions, actions
//   sema_scenarios.cpp   scenarios
// Errors go to the Diagnostics given to the Analyzer; nothing throws.
// Thread-safety: one Analyzer per analyze() call, used by that call only.
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/ast.h"
#include "compiler/diagnostics.h"
#include "compiler/ir.h"
#include "compiler/regex_check.h"
#include "compiler/sema.h"

namespace culprit::sema_internal {

using ast::ExprKind;
using ir::Op;

// The words rules may use (base/vocabulary.h).
inline const std::vector<std::string> kDomains = vocab::words(vocab::domains());
inline const std::vector<std::string> kStatuses = vocab::words(vocab::statuses());

bool one_of(const std::string& s, const auto& list) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

struct EventBuiltinDef { const char* name; int32_t sel; Type type; };
inline constexpr EventBuiltinDef kEventBuiltins[] = {
    {"kind", ir::kEvKind, Type::String},     {"node", ir::kEvNode, Type::String},
    {"host", ir::kEvHost, Type::String},     {"source", ir::kEvSource, Type::String},
    {"file", ir::kEvFile, Type::String},     {"line", ir::kEvLine, Type::Int},
    {"offset", ir::kEvOffset, Type::Int},    {"ts", ir::kEvTs, Type::Time},
    {"text", ir::kEvText, Type::String},
};
inline constexpr EventBuiltinDef kSymptomBuiltins[] = {
    {"id", ir::kSyId, Type::String},          {"kind", ir::kSyKind, Type::String},
    {"node", ir::kSyNode, Type::String},      {"key", ir::kSyKey, Type::String},
    {"first", ir::kSyFirst, Type::Time},      {"last", ir::kSyLast, Type::Time},
    {"count", ir::kSyCount, Type::Int},       {"priority", ir::kSyPriority, Type::Int},
    {"summary", ir::kSySummary, Type::String}, {"file", ir::kSyFile, Type::String},
    {"line", ir::kSyLine, Type::Int},         {"source", ir::kSySource, Type::String},
};

// The part of a one-line literal token that bytes [begin, end) of its value
// came from (defined in sema_expr.cpp).
SourceRange literal_sub_range(const SourceRange& lit, size_t begin, size_t end, bool string_literal);
// The last `len` bytes of a one-line range (a field name after its dot).
SourceRange tail_range(const SourceRange& r, size_t len);
// The first `len` bytes of a one-line range (a function's name).
SourceRange head_range(const SourceRange& r, size_t len);

template <typename List>
std::vector<std::string> names_of(const List& list) {
  std::vector<std::string> out;
  for (const auto& x : list) out.emplace_back(x);
  return out;
}

struct Binding {
  std::string name;
  int32_t slot = 0;
  bool symptom = false;
  std::vector<int32_t> kinds;
};

// Where an expression is being typed.
struct Scope {
  std::vector<Binding> bindings;
  const std::vector<std::string>* captures = nullptr;  // extractor emit only
  bool captures_unknown = false;                       // the regex was rejected: do not report captures
  // With several `match` clauses: the clause of each capture, and the clauses.
  const std::vector<int32_t>* capture_clause = nullptr;
  const std::vector<ast::MatchClause>* match_clauses = nullptr;
  bool grouped = false;       // group aggregates allowed
  bool outcome_visible = false;
  int32_t* next_slot = nullptr;
  std::vector<bool>* slot_is_symptom = nullptr;
  const Binding* find(const std::string& n) const {
    for (auto it = bindings.rbegin(); it != bindings.rend(); ++it)
      if (it->name == n) return &*it;
    return nullptr;
  }
};

class Analyzer {
 public:
  explicit Analyzer(Diagnostics& d) : diags_(d) {}

  ir::Catalog run(std::vector<CatalogPart>& parts);

 private:
  Diagnostics& diags_;
  ir::Catalog cat_;
  std::vector<ir::Query> queries_;  // expression queries of the rule being analyzed
  std::map<std::string, int32_t> event_ids_, symptom_ids_, field_ids_;
  // The highest constant priority each symptom kind is created with, for
  // E0209; a kind created with a computed priority or none, or whose
  // priority a rule sets, is in priority_unknown_ instead. Rules are analyzed in stage order,
  // so every `symptom` action is seen before an `outcome` rule classifies.
  std::map<int32_t, int64_t> priority_max_;
  // The catalog's tables (every part's), by name, with each column's type
  // (Type::Null for a column of nulls only).
  struct TableDef {
    const ast::Table* table = nullptr;
    std::vector<Type> types;
  };
  std::map<std::string, TableDef> tables_;
  std::set<int32_t> priority_unknown_;

  void err(const char* code, const SourceRange& r, std::string msg, std::string help = {}) {
    diags_.error(code, r, std::move(msg), std::move(help));
  }
  // E0207: a sub_domain whose first word is a near miss of one of its
  // domain's roots (base/vocabulary.h).
  void check_sub_domain_root(const std::string& domain, const std::string& sub_domain, const SourceRange& where);
  // E0208: an extractor's source that is a near miss of a source more
  // extractors read (`apps` beside `app`): it would read a file no bundle has.
  void check_source_names(const std::vector<CatalogPart>& parts);
  // E0209: an unconditional `classify` of symptoms whose every kind is
  // created with a priority under 50 (docs/language.md §4.4: never a cause
  // by itself).
  void check_classified_priority(const std::vector<int32_t>& kinds, const SourceRange& where);

  // ------------------------------------------- kinds and schemas (sema.cpp)
  std::vector<std::string> kind_names(bool symptom) const;
  std::vector<std::string> family_patterns(bool symptom) const;
  int32_t field_name_id(const std::string& n);
  int32_t register_kind(bool symptom, const std::string& name);
  int32_t add_field(bool symptom, int32_t kind, const std::string& field, Type type, const SourceRange& where);
  std::vector<int32_t> resolve_kinds(bool symptom, const std::string& pattern, const SourceRange& where);

  // ------------------------------------------------ exprs (sema_expr.cpp)
  ir::Expr make(Op op, Type t, const SourceRange& w) {
    ir::Expr e;
    e.op = op;
    e.type = t;
    e.where = w;
    return e;
  }
  ir::Expr bad(const SourceRange& w) { return make(Op::Const, Type::Null, w); }
  static bool numeric(Type t) { return t == Type::Int || t == Type::Float; }

  static std::vector<std::string> scope_names(const Scope& s, bool with_records);
  ir::Expr field_of_binding(const Binding& b, const std::string& field, const SourceRange& where);
  ir::Expr lower(const ast::Expr& x, Scope& s);
  ir::Expr lower_field(const ast::Expr& x, Scope& s);
  ir::Expr lower_binary(const ast::Expr& x, Scope& s);
  ir::Expr lower_call(const ast::Expr& x, Scope& s);
  ir::Query lower_query(const ast::Query& q, const std::string& binding, const SourceRange& binding_range, Scope& s,
                        Binding* bound_out);
  ir::Expr lower_interpolation(const std::string& text, const SourceRange& where, Scope& s);
  std::optional<Value> constant_of(const ast::Expr& x);

  // ------------------------------------- temporal order (sema_order.cpp)
  // An operand is a binding (an event or a symptom: its own time, its file
  // and line, its possibly inherited time) or a time expression.
  struct OrderOperand {
    const Binding* item = nullptr;  // a binding
    ir::Expr time;                  // else a time expression
    SourceRange where;
  };
  ir::Expr item_field(const Binding& b, int32_t ev_sel, int32_t sy_sel, Type t, const SourceRange& w);
  ir::Expr own_time(const OrderOperand& o);
  ir::Expr any_time(const OrderOperand& o);
  ir::Expr unary(Op op, Type t, ir::Expr k);
  ir::Expr binary(Op op, Type t, ir::Expr l, ir::Expr r);
  ir::Expr builtin(ir::Builtin fn, Type t, std::vector<ir::Expr> kids, const SourceRange& w);
  ir::Expr best_time(const OrderOperand& o);
  bool order_operand(const ast::Expr& x, Scope& s, OrderOperand& out);
  ir::Expr lower_order(const ast::Expr& x, Scope& s);

  // ------------------------------------------------ tables (sema_tables.cpp)
  void analyze_table(const ast::Table& t);
  const TableDef* find_table(const std::string& name, const SourceRange& where);
  int find_column(const TableDef& t, const std::string& column, const SourceRange& where);
  ir::Expr lower_lookup(const ast::Expr& x, Scope& s);
  // `regex` with each (?&TABLE.COLUMN) replaced by the alternation of that
  // column's values; `lit` is the literal it was written in (for carets).
  // nullopt after reporting an unknown table or column.
  std::optional<std::string> expand_table_refs(const std::string& regex, const SourceRange& lit);

  // --------------------------------------------------------- entities
  static std::string regex_help(const RegexCheck& c);        // sema_extractors.cpp
  bool report_regex(const RegexCheck& check, const SourceRange& where, bool in_literal,
                    const std::string& what);                 // sema_extractors.cpp
  std::optional<ir::Expr> capture_of_clauses(const ast::Expr& x, const Scope& s);  // sema_extractors.cpp
  void analyze_extractor(const ast::Extractor& x);            // sema_extractors.cpp
  void register_rule_kinds(const ast::Rule& r);               // sema_rules.cpp
  void analyze_rule(const ast::Rule& r, int32_t index);       // sema_rules.cpp
  void analyze_scenario(const ast::Scenario& sc);             // sema_scenarios.cpp
};

}  // namespace culprit::sema_internal
