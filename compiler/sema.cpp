#include "compiler/sema.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/limits.h"
#include "base/suggest.h"
#include "base/terminal_state.h"
#include "compiler/regex_check.h"
#include "base/text_util.h"
#include "base/timestamp.h"

namespace culprit {
namespace {

using ast::ExprKind;
using ir::Op;

constexpr std::array<const char*, 4> kDomains = {"hardware", "software", "infrastructure", "user"};
constexpr std::array<const char*, 4> kStatuses = {"attributed", "ambiguous", "unattributed", "no_failure"};

bool one_of(const std::string& s, const auto& list) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

struct EventBuiltinDef { const char* name; int32_t sel; Type type; };
constexpr EventBuiltinDef kEventBuiltins[] = {
    {"kind", ir::kEvKind, Type::String},     {"node", ir::kEvNode, Type::String},
    {"host", ir::kEvHost, Type::String},     {"source", ir::kEvSource, Type::String},
    {"file", ir::kEvFile, Type::String},     {"line", ir::kEvLine, Type::Int},
    {"offset", ir::kEvOffset, Type::Int},    {"ts", ir::kEvTs, Type::Time},
    {"text", ir::kEvText, Type::String},
};
constexpr EventBuiltinDef kSymptomBuiltins[] = {
    {"id", ir::kSyId, Type::String},          {"kind", ir::kSyKind, Type::String},
    {"node", ir::kSyNode, Type::String},      {"key", ir::kSyKey, Type::String},
    {"first", ir::kSyFirst, Type::Time},      {"last", ir::kSyLast, Type::Time},
    {"count", ir::kSyCount, Type::Int},       {"priority", ir::kSyPriority, Type::Int},
    {"summary", ir::kSySummary, Type::String}, {"file", ir::kSyFile, Type::String},
    {"line", ir::kSyLine, Type::Int},         {"source", ir::kSySource, Type::String},
};

struct BuiltinFn { const char* name; ir::Builtin id; int min_args, max_args; };
constexpr BuiltinFn kFunctions[] = {
    {"int", ir::Builtin::Int, 1, 1},         {"hex", ir::Builtin::Hex, 1, 1},
    {"float", ir::Builtin::Float, 1, 1},     {"duration", ir::Builtin::Duration, 2, 2},
    {"seconds", ir::Builtin::Seconds, 1, 1}, {"lower", ir::Builtin::Lower, 1, 1},
    {"upper", ir::Builtin::Upper, 1, 1},     {"trim", ir::Builtin::Trim, 1, 1},
    {"len", ir::Builtin::Len, 1, 1},         {"contains", ir::Builtin::Contains, 2, 2},
    {"starts_with", ir::Builtin::StartsWith, 2, 2}, {"ends_with", ir::Builtin::EndsWith, 2, 2},
    {"str", ir::Builtin::Str, 1, 1},         {"coalesce", ir::Builtin::Coalesce, 1, 16},
    {"covered", ir::Builtin::Covered, 2, 2}, {"coverage", ir::Builtin::Coverage, 1, 1},
    {"if", ir::Builtin::If, 3, 3},         {"time", ir::Builtin::Time, 1, 1},
    {"is_node", ir::Builtin::IsNode, 1, 1},
};

// The part of a one-line literal token that bytes [begin, end) of its value
// came from, so a caret can sit under a placeholder or a regex fragment
// instead of the whole literal. `string_literal` says how the token's text maps to
// the value: a string literal (escapes as the parser unquotes them) or a
// regex literal (only `\/` is shortened). Falls back to the literal.
SourceRange literal_sub_range(const SourceRange& lit, size_t begin, size_t end, bool string_literal) {
  if (!lit.file || lit.line == 0 || lit.end_line != lit.line) return lit;
  std::string_view src = lit.file->line_text(lit.line);
  size_t pos = lit.col;  // 0-based index just after the opening quote or slash
  size_t decoded = 0;
  uint32_t col_begin = 0, col_end = 0;
  auto mark = [&](size_t at) {
    if (decoded == begin && !col_begin) col_begin = static_cast<uint32_t>(at + 1);
    if (decoded == end && !col_end) col_end = static_cast<uint32_t>(at + 1);
  };
  size_t limit = std::min<size_t>(src.size(), lit.end_col > 0 ? lit.end_col - 1 : src.size());
  while (pos < limit) {
    mark(pos);
    if (col_end) break;
    char c = src[pos];
    size_t src_len = 1, dec_len = 1;
    if (c == '\\' && pos + 1 < limit) {
      char e = src[pos + 1];
      if (string_literal) {
        if (e == 'x' && pos + 3 < limit && std::isxdigit(static_cast<unsigned char>(src[pos + 2])) &&
            std::isxdigit(static_cast<unsigned char>(src[pos + 3]))) src_len = 4;
        else if (e == 'n' || e == 't' || e == 'r' || e == '"' || e == '\\') src_len = 2;
        else src_len = dec_len = 2;  // kept verbatim
      } else if (e == '/') {
        src_len = 2;
      } else {
        src_len = dec_len = 2;
      }
    }
    pos += src_len;
    decoded += dec_len;
  }
  mark(pos);
  if (!col_begin || !col_end || col_end <= col_begin) return lit;
  return SourceRange{lit.file, lit.line, col_begin, lit.line, col_end};
}

// The last `len` bytes of a one-line range (a field name after its dot).
SourceRange tail_range(const SourceRange& r, size_t len) {
  if (!r.file || r.end_line != r.line || r.end_col < len + r.col) return r;
  return SourceRange{r.file, r.line, static_cast<uint32_t>(r.end_col - len), r.line, r.end_col};
}

// The first `len` bytes of a one-line range (a function's name).
SourceRange head_range(const SourceRange& r, size_t len) {
  if (!r.file || r.end_line != r.line || r.col + len > r.end_col) return r;
  return SourceRange{r.file, r.line, r.col, r.line, static_cast<uint32_t>(r.col + len)};
}

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

  void err(const char* code, const SourceRange& r, std::string msg, std::string help = {}) {
    diags_.error(code, r, std::move(msg), std::move(help));
  }
  // The kinds of one category, for suggestions: by name, so the choice is
  // deterministic.
  std::vector<std::string> kind_names(bool symptom) const {
    std::vector<std::string> out;
    for (const auto& [name, id] : symptom ? symptom_ids_ : event_ids_) out.push_back(name);
    return out;
  }
  // Every family ("nccl.*", "gpu.xid.*") the kinds of one category form.
  std::vector<std::string> family_patterns(bool symptom) const {
    std::set<std::string> fams;
    for (const auto& [name, id] : symptom ? symptom_ids_ : event_ids_)
      for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
        fams.insert(name.substr(0, dot) + ".*");
    fams.insert("*");
    return {fams.begin(), fams.end()};
  }

  int32_t field_name_id(const std::string& n) {
    auto [it, inserted] = field_ids_.emplace(n, static_cast<int32_t>(cat_.field_names.size()));
    if (inserted) cat_.field_names.push_back(n);
    return it->second;
  }
  int32_t register_kind(bool symptom, const std::string& name) {
    auto& ids = symptom ? symptom_ids_ : event_ids_;
    auto& kinds = symptom ? cat_.symptom_kinds : cat_.event_kinds;
    auto [it, inserted] = ids.emplace(name, static_cast<int32_t>(kinds.size()));
    if (inserted) kinds.push_back(ir::KindSchema{name, {}, {}});
    return it->second;
  }
  // Adds (or checks) a field of a kind's schema; returns its slot or -1.
  int32_t add_field(bool symptom, int32_t kind, const std::string& field, Type type, const SourceRange& where) {
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

  std::vector<int32_t> resolve_kinds(bool symptom, const std::string& pattern, const SourceRange& where) {
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

  // ---------------------------------------------------------------- exprs
  ir::Expr make(Op op, Type t, const SourceRange& w) {
    ir::Expr e;
    e.op = op;
    e.type = t;
    e.where = w;
    return e;
  }
  ir::Expr bad(const SourceRange& w) { return make(Op::Const, Type::Null, w); }

  // The names an expression can start with, for suggestions.
  static std::vector<std::string> scope_names(const Scope& s, bool with_records) {
    std::vector<std::string> out;
    for (const auto& b : s.bindings) out.push_back(b.name);
    if (with_records)
      for (const char* r : {"terminal", "outcome", "workload"}) out.emplace_back(r);
    return out;
  }

  // What to write instead of a regex neither engine can run.
  static std::string regex_help(const RegexCheck& c) {
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

  ir::Expr field_of_binding(const Binding& b, const std::string& field, const SourceRange& where) {
    const auto* begin = b.symptom ? std::begin(kSymptomBuiltins) : std::begin(kEventBuiltins);
    const auto* end = b.symptom ? std::end(kSymptomBuiltins) : std::end(kEventBuiltins);
    for (const auto* it = begin; it != end; ++it) {
      if (field == it->name) {
        auto e = make(b.symptom ? Op::SymptomField : Op::EventField, it->type, where);
        e.a = b.slot;
        e.b = it->sel;
        return e;
      }
    }
    auto fid = field_ids_.find(field);
    const auto& kinds = b.symptom ? cat_.symptom_kinds : cat_.event_kinds;
    Type t = Type::Null;
    bool ok = fid != field_ids_.end() && !b.kinds.empty();
    std::string missing_in;
    for (int32_t k : b.kinds) {
      const auto& schema = kinds[static_cast<size_t>(k)];
      int32_t slot = ok ? schema.slot(fid->second) : -1;
      if (slot < 0) {
        ok = false;
        missing_in = schema.name;
        break;
      }
      Type ft = schema.fields[static_cast<size_t>(slot)].type;
      if (t == Type::Null) t = ft;
      else if (ft != Type::Null && ft != t) {
        err("E0303", where, fmt::format("field '{}' has different types across the kinds bound to '{}'", field, b.name));
        return bad(where);
      }
    }
    if (!ok) {
      if (b.kinds.empty()) return bad(where);  // kind error already reported
      std::vector<std::string> known;
      for (const auto* it = begin; it != end; ++it) known.emplace_back(it->name);
      for (int32_t k : b.kinds)
        for (const auto& f : kinds[static_cast<size_t>(k)].fields) known.push_back(f.name);
      err("E0204", tail_range(where, field.size()), missing_in.empty() || b.kinds.size() == 1
                              ? fmt::format("'{}' has no field '{}'", missing_in.empty() ? b.name : missing_in, field)
                              : fmt::format("field '{}' is not present in every kind bound to '{}' (missing in '{}')",
                                            field, b.name, missing_in),
          did_you_mean(field, known));
      return bad(where);
    }
    auto e = make(b.symptom ? Op::SymptomField : Op::EventField, t, where);
    e.a = b.slot;
    e.b = fid->second;
    return e;
  }

  ir::Expr lower(const ast::Expr& x, Scope& s);

  // ------------------------------------------------------ temporal order
  // `Y [not] before|after X [± D]` (docs/language.md §6.1) is lowered onto
  // existing operations and the hidden fields kEvOwnTs/kEvPlace and
  // kSyOwnFirst/kSyPlace/kSyPlaceLine, so every executor agrees by
  // construction. An operand is a binding (an event or a symptom: its own
  // time, its file and line, its possibly inherited time) or a time expression.
  struct OrderOperand {
    const Binding* item = nullptr;  // a binding
    ir::Expr time;                  // else a time expression
    SourceRange where;
  };

  ir::Expr item_field(const Binding& b, int32_t ev_sel, int32_t sy_sel, Type t, const SourceRange& w) {
    auto e = make(b.symptom ? Op::SymptomField : Op::EventField, t, w);
    e.a = b.slot;
    e.b = b.symptom ? sy_sel : ev_sel;
    return e;
  }
  ir::Expr own_time(const OrderOperand& o) {
    return o.item ? item_field(*o.item, ir::kEvOwnTs, ir::kSyOwnFirst, Type::Time, o.where) : o.time;
  }
  ir::Expr any_time(const OrderOperand& o) {
    return o.item ? item_field(*o.item, ir::kEvTs, ir::kSyFirst, Type::Time, o.where) : o.time;
  }
  ir::Expr unary(Op op, Type t, ir::Expr k) {
    auto e = make(op, t, k.where);
    e.kids.push_back(std::move(k));
    return e;
  }
  ir::Expr binary(Op op, Type t, ir::Expr l, ir::Expr r) {
    auto e = make(op, t, l.where);
    e.kids.push_back(std::move(l));
    e.kids.push_back(std::move(r));
    return e;
  }
  ir::Expr builtin(ir::Builtin fn, Type t, std::vector<ir::Expr> kids, const SourceRange& w) {
    auto e = make(Op::Call, t, w);
    e.a = static_cast<int32_t>(fn);
    e.kids = std::move(kids);
    return e;
  }
  // own time if known, else the (possibly inherited) time: the time of an
  // item compared with a plain time expression.
  ir::Expr best_time(const OrderOperand& o) {
    if (!o.item) return o.time;
    std::vector<ir::Expr> k;
    k.push_back(own_time(o));
    k.push_back(any_time(o));
    return builtin(ir::Builtin::Coalesce, Type::Time, std::move(k), o.where);
  }

  bool order_operand(const ast::Expr& x, Scope& s, OrderOperand& out) {
    out.where = x.where;
    if (x.kind == ExprKind::Name && !s.captures) {
      if (const Binding* b = s.find(x.text)) {
        out.item = b;
        return true;
      }
    }
    auto e = lower(x, s);
    if (e.type != Type::Time && e.type != Type::Null) {
      err("E0301", x.where, fmt::format("'before' and 'after' order bindings or times, not {}", type_name(e.type)));
      return false;
    }
    out.time = std::move(e);
    return true;
  }

  ir::Expr lower_order(const ast::Expr& x, Scope& s) {
    const bool before = x.op == "before";
    // Y before X: t(Y) < t(X); not before: >=; after: >; not after: <=.
    const Op cmp = before ? (x.negated ? Op::Ge : Op::Lt) : (x.negated ? Op::Le : Op::Gt);
    OrderOperand y, xo;
    const ast::Expr& left = *x.args[0];
    const ast::Expr& right = *x.args[1];
    if (left.kind == ExprKind::Binary && (left.op == "+" || left.op == "-") && left.args[0]->kind == ExprKind::Name &&
        s.find(left.args[0]->text)) {
      err("E0301", left.where, "write the offset on the right-hand side: 'y not before x - 5m'");
      return bad(x.where);
    }
    if (!order_operand(left, s, y)) return bad(x.where);
    // The anchor may carry an offset: `x - 5m`, `x + h.tolerance`.
    std::optional<ir::Expr> offset;
    bool subtract = false;
    const ast::Expr* anchor = &right;
    if (right.kind == ExprKind::Binary && (right.op == "+" || right.op == "-") && right.args[0]->kind == ExprKind::Name &&
        s.find(right.args[0]->text)) {
      auto d = lower(*right.args[1], s);
      if (d.type != Type::Duration && d.type != Type::Null) {
        err("E0301", right.args[1]->where, fmt::format("the offset of '{}' must be a duration, not {}", right.args[0]->text,
                                                        type_name(d.type)));
        return bad(x.where);
      }
      offset = std::move(d);
      subtract = right.op == "-";
      anchor = right.args[0].get();
    }
    if (!order_operand(*anchor, s, xo)) return bad(x.where);
    auto shifted = [&](ir::Expr t) {
      if (!offset) return t;
      return binary(subtract ? Op::Sub : Op::Add, Type::Time, std::move(t), *offset);
    };
    if (!y.item || !xo.item) return binary(cmp, Type::Bool, best_time(y), shifted(best_time(xo)));
    // Both are items. Read from one file, their line order decides (it is
    // exact even where times are coarse, inherited or missing), unless an
    // offset is given and both carry their own times (or both unanchored
    // dmesg boot seconds, which measure the gap). Otherwise their own
    // times; else their times, inherited ones included; else false: what
    // cannot be ordered is neither before nor after.
    auto own_known = binary(Op::And, Type::Bool, unary(Op::IsNotNull, Type::Bool, own_time(y)),
                            unary(Op::IsNotNull, Type::Bool, own_time(xo)));
    auto by_own = binary(cmp, Type::Bool, own_time(y), shifted(own_time(xo)));
    auto same_file = binary(Op::Eq, Type::Bool, item_field(*y.item, ir::kEvPlace, ir::kSyPlace, Type::String, y.where),
                            item_field(*xo.item, ir::kEvPlace, ir::kSyPlace, Type::String, xo.where));
    auto by_line = binary(cmp, Type::Bool, item_field(*y.item, ir::kEvLine, ir::kSyPlaceLine, Type::Int, y.where),
                          item_field(*xo.item, ir::kEvLine, ir::kSyPlaceLine, Type::Int, xo.where));
    auto by_time = binary(cmp, Type::Bool, any_time(y), shifted(any_time(xo)));
    auto choose = [&](ir::Expr c, ir::Expr a, ir::Expr b) {
      std::vector<ir::Expr> k;
      k.push_back(std::move(c));
      k.push_back(std::move(a));
      k.push_back(std::move(b));
      return builtin(ir::Builtin::If, Type::Bool, std::move(k), x.where);
    };
    // With an offset in one file without own times, the file's own clock
    // still measures the gap when both lines carry dmesg boot seconds that
    // were never anchored to the wall clock.
    auto boot_y = item_field(*y.item, ir::kEvBoot, ir::kSyPlaceBoot, Type::Duration, y.where);
    auto boot_x = item_field(*xo.item, ir::kEvBoot, ir::kSyPlaceBoot, Type::Duration, xo.where);
    auto both_boot = binary(Op::And, Type::Bool, unary(Op::IsNotNull, Type::Bool, boot_y), unary(Op::IsNotNull, Type::Bool, boot_x));
    auto by_boot = offset ? binary(cmp, Type::Bool, boot_y, binary(subtract ? Op::Sub : Op::Add, Type::Duration, boot_x, *offset))
                          : binary(cmp, Type::Bool, boot_y, boot_x);
    ir::Expr e = offset ? choose(std::move(own_known), std::move(by_own),
                                 choose(std::move(same_file),
                                        choose(std::move(both_boot), std::move(by_boot), std::move(by_line)),
                                        std::move(by_time)))
                        : choose(std::move(same_file), std::move(by_line),
                                 choose(std::move(own_known), std::move(by_own), std::move(by_time)));
    e.where = x.where;
    return e;
  }

  ir::Expr lower_field(const ast::Expr& x, Scope& s) {
    const ast::Expr& base = *x.args[0];
    if (base.kind == ExprKind::Name) {
      if (const Binding* b = s.find(base.text)) return field_of_binding(*b, x.text, x.where);
      if (base.text == "terminal") {
        if (x.text == "state") { auto e = make(Op::Terminal, Type::String, x.where); e.a = 0; return e; }
        if (x.text == "exit_code") { auto e = make(Op::Terminal, Type::Int, x.where); e.a = 1; return e; }
        err("E0204", tail_range(x.where, x.text.size()), fmt::format("'terminal' has no field '{}' (it has state, exit_code)", x.text),
            did_you_mean(x.text, {"state", "exit_code"}));
        return bad(x.where);
      }
      if (base.text == "outcome") {
        if (!s.outcome_visible) {
          err("E0601", x.where, "'outcome' is only known in the post_outcome stage");
          return bad(x.where);
        }
        static const std::pair<const char*, Type> fields[] = {
            {"status", Type::String}, {"domain", Type::String}, {"sub_domain", Type::String}, {"culprits", Type::Int}};
        for (int i = 0; i < 4; ++i)
          if (x.text == fields[i].first) { auto e = make(Op::Outcome, fields[i].second, x.where); e.a = i; return e; }
        err("E0204", tail_range(x.where, x.text.size()),
            fmt::format("'outcome' has no field '{}' (it has status, domain, sub_domain, culprits)", x.text),
            did_you_mean(x.text, {"status", "domain", "sub_domain", "culprits"}));
        return bad(x.where);
      }
      if (base.text == "workload") {
        if (x.text == "nodes") { auto e = make(Op::Workload, Type::Int, x.where); e.a = 0; return e; }
        if (x.text == "id") { auto e = make(Op::Workload, Type::String, x.where); e.a = 1; return e; }
        if (x.text == "start") { auto e = make(Op::Workload, Type::Time, x.where); e.a = 2; return e; }
        if (x.text == "end") { auto e = make(Op::Workload, Type::Time, x.where); e.a = 3; return e; }
        if (x.text == "scheduler") { auto e = make(Op::Workload, Type::String, x.where); e.a = 4; return e; }
        if (x.text == "node_names") { auto e = make(Op::Workload, Type::String, x.where); e.a = 5; return e; }
        err("E0204", tail_range(x.where, x.text.size()), fmt::format("'workload' has no field '{}' (it has nodes, id, start, end, scheduler, node_names)", x.text),
            did_you_mean(x.text, {"nodes", "id", "start", "end", "scheduler", "node_names"}));
        return bad(x.where);
      }
    }
    err("E0202", base.where, fmt::format("'{}' is not a binding; fields can only be read from a binding, "
                                         "'terminal', 'outcome' or 'workload'",
                                         base.kind == ExprKind::Name ? base.text : std::string("this expression")),
        base.kind == ExprKind::Name ? did_you_mean(base.text, scope_names(s, true)) : std::string());
    return bad(x.where);
  }

  bool numeric(Type t) { return t == Type::Int || t == Type::Float; }

  ir::Expr lower_binary(const ast::Expr& x, Scope& s) {
    ir::Expr l = lower(*x.args[0], s), r = lower(*x.args[1], s);
    const std::string& op = x.op;
    Type a = l.type, b = r.type;
    auto result = [&](Op o, Type t) {
      auto e = make(o, t, x.where);
      e.kids.push_back(std::move(l));
      e.kids.push_back(std::move(r));
      return e;
    };
    auto mismatch = [&]() {
      err("E0301", x.where, fmt::format("operator '{}' cannot take {} and {}", op, type_name(a), type_name(b)));
      return bad(x.where);
    };
    bool any_null = a == Type::Null || b == Type::Null;
    if (op == "and" || op == "or") {
      if ((a != Type::Bool && a != Type::Null) || (b != Type::Bool && b != Type::Null)) return mismatch();
      return result(op == "and" ? Op::And : Op::Or, Type::Bool);
    }
    if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=") {
      if (x.args[0]->kind == ExprKind::NullLit || x.args[1]->kind == ExprKind::NullLit) {
        err("E0301", x.where, "a comparison with null is never true; use 'is null' or 'is not null'");
        return bad(x.where);
      }
      bool same = a == b || (numeric(a) && numeric(b)) || any_null;
      bool ordered = op != "==" && op != "!=";
      if (!same || (ordered && a == Type::Bool)) return mismatch();
      Op o = op == "==" ? Op::Eq : op == "!=" ? Op::Ne : op == "<" ? Op::Lt : op == "<=" ? Op::Le : op == ">" ? Op::Gt : Op::Ge;
      return result(o, Type::Bool);
    }
    if (op == "+") {
      if (a == Type::Int && b == Type::Int) return result(Op::Add, Type::Int);
      if (numeric(a) && numeric(b)) return result(Op::Add, Type::Float);
      if ((a == Type::Time && b == Type::Duration) || (a == Type::Duration && b == Type::Time)) return result(Op::Add, Type::Time);
      if (a == Type::Duration && b == Type::Duration) return result(Op::Add, Type::Duration);
      if (a == Type::String && b == Type::String) return result(Op::Add, Type::String);
      if (any_null) return result(Op::Add, a == Type::Null ? b : a);
      return mismatch();
    }
    if (op == "-") {
      if (a == Type::Int && b == Type::Int) return result(Op::Sub, Type::Int);
      if (numeric(a) && numeric(b)) return result(Op::Sub, Type::Float);
      if (a == Type::Time && b == Type::Time) return result(Op::Sub, Type::Duration);
      if (a == Type::Time && b == Type::Duration) return result(Op::Sub, Type::Time);
      if (a == Type::Duration && b == Type::Duration) return result(Op::Sub, Type::Duration);
      if (any_null && a != Type::String && b != Type::String) return result(Op::Sub, a == Type::Null ? b : a);
      return mismatch();
    }
    if (op == "*") {
      if (a == Type::Int && b == Type::Int) return result(Op::Mul, Type::Int);
      if (numeric(a) && numeric(b)) return result(Op::Mul, Type::Float);
      if ((a == Type::Duration && b == Type::Int) || (a == Type::Int && b == Type::Duration)) return result(Op::Mul, Type::Duration);
      if (any_null && (numeric(a) || numeric(b))) return result(Op::Mul, a == Type::Null ? b : a);
      return mismatch();
    }
    // % << >> & ^ | : integers only
    if ((a != Type::Int && a != Type::Null) || (b != Type::Int && b != Type::Null)) return mismatch();
    Op o = op == "%" ? Op::Mod : op == "<<" ? Op::Shl : op == ">>" ? Op::Shr : op == "&" ? Op::BitAnd : op == "^" ? Op::BitXor : Op::BitOr;
    return result(o, Type::Int);
  }

  ir::Expr lower_call(const ast::Expr& x, Scope& s) {
    // Group aggregates first: they only exist inside a `group by` rule's actions.
    static const std::pair<const char*, Op> group_fns[] = {
        {"count", Op::GroupCount}, {"distinct", Op::GroupDistinct}, {"values", Op::GroupValues},
        {"first_ts", Op::GroupFirstTs}, {"last_ts", Op::GroupLastTs}};
    for (const auto& [name, op] : group_fns) {
      if (x.text != name) continue;
      size_t want = (op == Op::GroupDistinct || op == Op::GroupValues) ? 1 : 0;
      if (!s.grouped) {
        err("E0304", x.where, fmt::format("'{}()' is a group aggregate: it needs 'group by' and can only be used in actions", name));
        return bad(x.where);
      }
      if (x.args.size() != want) {
        err("E0302", x.where, fmt::format("'{}' takes {} argument{}", name, want, want == 1 ? "" : "s"));
        return bad(x.where);
      }
      Type t = op == Op::GroupCount || op == Op::GroupDistinct ? Type::Int : op == Op::GroupValues ? Type::String : Type::Time;
      auto e = make(op, t, x.where);
      if (want) {
        // The argument is evaluated per group member, with slot 0 bound to it.
        e.kids.push_back(lower(*x.args[0], s));
      }
      return e;
    }
    const BuiltinFn* fn = nullptr;
    for (const auto& f : kFunctions)
      if (x.text == f.name) fn = &f;
    if (!fn) {
      std::vector<std::string> fns;
      for (const auto& f : kFunctions) fns.emplace_back(f.name);
      for (const auto& [name, op] : group_fns) fns.emplace_back(name);
      for (const char* q : {"exists", "none", "nodes", "max", "min"}) fns.emplace_back(q);
      err("E0202", head_range(x.where, x.text.size()), fmt::format("unknown function '{}'", x.text), did_you_mean(x.text, fns));
      for (const auto& a : x.args) lower(*a, s);  // mistakes inside the arguments are mistakes of their own
      return bad(x.where);
    }
    if (static_cast<int>(x.args.size()) < fn->min_args || static_cast<int>(x.args.size()) > fn->max_args) {
      err("E0302", x.where, fn->min_args == fn->max_args
                                ? fmt::format("'{}' takes {} argument{}", fn->name, fn->min_args, fn->min_args == 1 ? "" : "s")
                                : fmt::format("'{}' takes {} to {} arguments", fn->name, fn->min_args, fn->max_args));
      return bad(x.where);
    }
    auto e = make(Op::Call, Type::Null, x.where);
    e.a = static_cast<int32_t>(fn->id);
    if (fn->id == ir::Builtin::Covered || fn->id == ir::Builtin::Coverage) {
      // The source is written as a bare name (`covered(kernel, e.node)`).
      const ast::Expr& src = *x.args[0];
      if (src.kind != ExprKind::Name && src.kind != ExprKind::StringLit) {
        err("E0301", src.where, fmt::format("the first argument of '{}' is a source name such as kernel or app", fn->name));
        return bad(x.where);
      }
      auto c = make(Op::Const, Type::String, src.where);
      c.constant = Value::string(src.text);
      e.kids.push_back(std::move(c));
      if (fn->id == ir::Builtin::Covered) {
        auto n = lower(*x.args[1], s);
        if (n.type != Type::String && n.type != Type::Null) {
          err("E0301", x.args[1]->where, "the node argument of 'covered' must be a string");
          return bad(x.where);
        }
        e.kids.push_back(std::move(n));
        e.type = Type::Bool;
      } else {
        e.type = Type::Float;
      }
      return e;
    }
    for (const auto& a : x.args) e.kids.push_back(lower(*a, s));
    auto arg = [&](size_t i) { return e.kids[i].type; };
    auto want = [&](size_t i, std::initializer_list<Type> ok) {
      if (arg(i) == Type::Null) return true;
      for (Type t : ok)
        if (arg(i) == t) return true;
      std::string names;
      for (Type t : ok) names += (names.empty() ? "" : " or ") + std::string(type_name(t));
      err("E0301", x.args[i]->where, fmt::format("argument {} of '{}' must be {}, not {}", i + 1, fn->name, names, type_name(arg(i))));
      return false;
    };
    bool ok = true;
    switch (fn->id) {
      case ir::Builtin::Int: ok = want(0, {Type::String, Type::Int, Type::Float}); e.type = Type::Int; break;
      case ir::Builtin::Hex: ok = want(0, {Type::String, Type::Int}); e.type = Type::Int; break;
      case ir::Builtin::Float: ok = want(0, {Type::String, Type::Int, Type::Float}); e.type = Type::Float; break;
      case ir::Builtin::Duration:
        ok = want(0, {Type::Int, Type::Float, Type::String});
        if (x.args[1]->kind != ExprKind::StringLit || !one_of(x.args[1]->text, std::array{"ns", "us", "ms", "s", "m", "h"})) {
          err("E0301", x.args[1]->where, "the unit of 'duration' must be one of \"ns\", \"us\", \"ms\", \"s\", \"m\", \"h\"");
          ok = false;
        }
        e.type = Type::Duration;
        break;
      case ir::Builtin::Seconds: ok = want(0, {Type::Duration}); e.type = Type::Float; break;
      case ir::Builtin::Lower: case ir::Builtin::Upper: case ir::Builtin::Trim:
        ok = want(0, {Type::String}); e.type = Type::String; break;
      case ir::Builtin::Len: ok = want(0, {Type::String}); e.type = Type::Int; break;
      case ir::Builtin::Contains: case ir::Builtin::StartsWith: case ir::Builtin::EndsWith:
        ok = want(0, {Type::String}) && want(1, {Type::String}); e.type = Type::Bool; break;
      case ir::Builtin::Str: e.type = Type::String; break;
      case ir::Builtin::Time: ok = want(0, {Type::String}); e.type = Type::Time; break;
      case ir::Builtin::IsNode: ok = want(0, {Type::String}); e.type = Type::Bool; break;
      case ir::Builtin::If: {
        ok = want(0, {Type::Bool});
        Type a = arg(1), b = arg(2);
        if (a != Type::Null && b != Type::Null && a != b && !(numeric(a) && numeric(b))) {
          err("E0301", x.where, fmt::format("'if' branches must share one type ({} vs {})", type_name(a), type_name(b)));
          ok = false;
        }
        e.type = a == Type::Null ? b : (numeric(a) && numeric(b) && a != b) ? Type::Float : a;
        break;
      }
      case ir::Builtin::Coalesce: {
        Type t = Type::Null;
        for (size_t i = 0; i < e.kids.size(); ++i) {
          Type k = arg(i);
          if (k == Type::Null) continue;
          if (t == Type::Null) t = k;
          else if (k != t) {
            err("E0301", x.args[i]->where, fmt::format("'coalesce' arguments must share one type ({} vs {})", type_name(t), type_name(k)));
            ok = false;
          }
        }
        e.type = t;
        break;
      }
      default: break;
    }
    return ok ? std::move(e) : bad(x.where);
  }

  ir::Query lower_query(const ast::Query& q, const std::string& binding, const SourceRange& binding_range, Scope& s,
                        Binding* bound_out) {
    ir::Query out;
    out.symptom = q.symptom;
    out.kinds = resolve_kinds(q.symptom, q.kind_pattern, q.kind_range);
    out.relation = q.relation == ast::NodeRelation::Same ? ir::NodeRelation::Same
                 : q.relation == ast::NodeRelation::Other ? ir::NodeRelation::Other : ir::NodeRelation::Any;
    if (out.relation != ir::NodeRelation::Any) {
      const Binding* f = s.bindings.empty() ? nullptr : &s.bindings.front();
      if (!f || f->slot != 0) {
        err("E0602", q.where, "'on same node' / 'on other nodes' compare with the rule's 'for' binding, and this rule has none");
      }
      out.relation_slot = 0;
    }
    if (q.has_within) {
      const Binding* anchor = s.find(q.anchor);
      if (!anchor) {
        err("E0602", q.anchor_range, fmt::format("'within ... {}' needs a binding named '{}'", q.anchor, q.anchor),
            did_you_mean(q.anchor, scope_names(s, false)));
      } else {
        out.anchor_slot = anchor->slot;
        out.anchor_is_symptom = anchor->symptom;
      }
      out.has_within = true;
      out.within_ns = q.within_ns;
      out.direction = q.direction == ast::WithinDirection::Before ? ir::WithinDirection::Before
                    : q.direction == ast::WithinDirection::After ? ir::WithinDirection::After : ir::WithinDirection::Around;
    }
    Binding b{binding, (*s.next_slot)++, q.symptom, out.kinds};
    s.slot_is_symptom->push_back(q.symptom);
    out.bind_slot = b.slot;
    if (s.find(binding)) err("E0101", binding_range, fmt::format("binding '{}' is already defined in this rule", binding));
    if (q.filter) {
      Scope inner = s;
      inner.bindings.push_back(b);
      inner.grouped = false;
      auto f = lower(*q.filter, inner);
      if (f.type != Type::Bool && f.type != Type::Null)
        err("E0301", q.filter->where, fmt::format("a 'where' condition must be bool, not {}", type_name(f.type)));
      out.filter = std::move(f);
    }
    if (bound_out) *bound_out = b;
    return out;
  }

  ir::Expr lower_interpolation(const std::string& text, const SourceRange& where, Scope& s) {
    auto e = make(Op::Interpolate, Type::String, where);
    std::string lit;
    auto flush = [&]() {
      if (lit.empty()) return;
      auto c = make(Op::Const, Type::String, where);
      c.constant = Value::string(lit);
      e.kids.push_back(std::move(c));
      lit.clear();
    };
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '{' && i + 1 < text.size() && text[i + 1] == '{') { lit += '{'; ++i; continue; }
      if (text[i] == '}' && i + 1 < text.size() && text[i + 1] == '}') { lit += '}'; ++i; continue; }
      if (text[i] != '{') { lit += text[i]; continue; }
      size_t close = text.find('}', i);
      if (close == std::string::npos) {
        err("E0001", literal_sub_range(where, i, i + 1, true), "unclosed '{' in string interpolation",
            "close it with '}', or write '{{' for a literal brace");
        return bad(where);
      }
      SourceRange at = literal_sub_range(where, i, close + 1, true);
      std::string path(trim(std::string_view(text).substr(i + 1, close - i - 1)));
      auto parts = split(path, '.');
      bool valid = !parts.empty();
      for (auto p : parts)
        valid = valid && !p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      if (!valid) {
        err("E0001", at, fmt::format("'{{{}}}' is not an interpolation path like {{x.node}}", path),
            "write a binding's field such as {x.node}, or '{{' and '}}' for literal braces");
        return bad(where);
      }
      if (parts.size() > limits::kExprDepth) {
        err("E0703", where, limits::exceeded("expr_depth", limits::kExprDepth, "the interpolation path has more fields"));
        return bad(where);
      }
      // Build the path as an expression so it resolves like written code.
      auto node = std::make_unique<ast::Expr>();
      node->kind = ExprKind::Name;
      // Each part's range is the placeholder up to the end of that part, so
      // a bad name or field is underlined where it is written.
      size_t inner = text.find_first_not_of(" \t", i + 1);
      node->text = std::string(parts[0]);
      node->where = literal_sub_range(where, inner, inner + parts[0].size(), true);
      size_t upto = inner + parts[0].size();
      for (size_t k = 1; k < parts.size(); ++k) {
        auto f = std::make_unique<ast::Expr>();
        f->kind = ExprKind::Field;
        f->text = std::string(parts[k]);
        upto += 1 + parts[k].size();
        f->where = literal_sub_range(where, inner, upto, true);
        f->args.push_back(std::move(node));
        node = std::move(f);
      }
      flush();
      e.kids.push_back(lower(*node, s));
      i = close;
    }
    flush();
    return e;
  }

  // ------------------------------------------------------------ entities
  void analyze_extractor(const ast::Extractor& x);
  void analyze_rule(const ast::Rule& r, int32_t index);
  void analyze_scenario(const ast::Scenario& sc);
  void register_rule_kinds(const ast::Rule& r);
  std::optional<Value> constant_of(const ast::Expr& x);
};

ir::Expr Analyzer::lower(const ast::Expr& x, Scope& s) {
  switch (x.kind) {
    case ExprKind::IntLit: { auto e = make(Op::Const, Type::Int, x.where); e.constant = Value::integer(x.int_value); return e; }
    case ExprKind::FloatLit: { auto e = make(Op::Const, Type::Float, x.where); e.constant = Value::real(x.float_value); return e; }
    case ExprKind::DurationLit: { auto e = make(Op::Const, Type::Duration, x.where); e.constant = Value::duration(x.int_value); return e; }
    case ExprKind::BoolLit: { auto e = make(Op::Const, Type::Bool, x.where); e.constant = Value::boolean(x.bool_value); return e; }
    case ExprKind::NullLit: return make(Op::Const, Type::Null, x.where);
    case ExprKind::StringLit: {
      if (x.text.find('{') != std::string::npos || x.text.find('}') != std::string::npos)
        return lower_interpolation(x.text, x.where, s);
      auto e = make(Op::Const, Type::String, x.where);
      e.constant = Value::string(x.text);
      return e;
    }
    case ExprKind::Name: {
      if (s.captures) {
        for (size_t i = 0; i < s.captures->size(); ++i) {
          if ((*s.captures)[i] == x.text) {
            auto e = make(Op::Capture, Type::String, x.where);
            e.a = static_cast<int32_t>(i);
            return e;
          }
        }
        if (!s.captures_unknown) {
          std::vector<std::string> caps;
          for (const auto& c : *s.captures)
            if (!c.empty()) caps.push_back(c);
          std::string help = did_you_mean(x.text, caps);
          if (help.empty()) help = "name the group in the regex: (?<" + x.text + ">...)";
          err("E0403", x.where, fmt::format("'{}' is not a named capture of this extractor's regex", x.text), help);
        }
        return bad(x.where);
      }
      if (s.find(x.text)) {
        err("E0301", x.where, fmt::format("'{}' is a binding; read one of its fields, such as {}.node or {}.ts", x.text, x.text, x.text));
        return bad(x.where);
      }
      if (x.text == "terminal" || x.text == "outcome" || x.text == "workload") {
        err("E0301", x.where, fmt::format("'{}' is a record; read one of its fields", x.text));
        return bad(x.where);
      }
      err("E0202", x.where, fmt::format("unknown name '{}'", x.text), did_you_mean(x.text, scope_names(s, true)));
      return bad(x.where);
    }
    case ExprKind::Field: return lower_field(x, s);
    case ExprKind::Unary: {
      auto k = lower(*x.args[0], s);
      if (x.op == "not") {
        if (k.type != Type::Bool && k.type != Type::Null) {
          err("E0301", x.where, fmt::format("'not' needs a bool, not {}", type_name(k.type)));
          return bad(x.where);
        }
        auto e = make(Op::Not, Type::Bool, x.where);
        e.kids.push_back(std::move(k));
        return e;
      }
      if (k.op == Op::Const && (k.type == Type::Int || k.type == Type::Float || k.type == Type::Duration)) {
        k.constant.i = -k.constant.i;
        k.constant.f = -k.constant.f;
        k.where = x.where;
        return k;
      }
      if (!numeric(k.type) && k.type != Type::Duration && k.type != Type::Null) {
        err("E0301", x.where, fmt::format("unary '-' needs a number or duration, not {}", type_name(k.type)));
        return bad(x.where);
      }
      auto e = make(Op::Neg, k.type, x.where);
      e.kids.push_back(std::move(k));
      return e;
    }
    case ExprKind::Binary: return lower_binary(x, s);
    case ExprKind::Matches: {
      auto k = lower(*x.args[0], s);
      if (k.type != Type::String && k.type != Type::Null) {
        err("E0301", x.where, fmt::format("'matches' needs a string, not {}", type_name(k.type)));
        return bad(x.where);
      }
      bool caseless = x.regex_flags.find('i') != std::string::npos;
      bool dotall = x.regex_flags.find('s') != std::string::npos;
      auto check = check_regex(x.text, caseless, dotall, /*scanned=*/false);  // RE2 only
      if (!check.limit_error.empty()) {
        err(check.limit_code.c_str(), x.regex_range.file ? x.regex_range : x.where, check.limit_error);
        return bad(x.where);
      }
      if (!check.re2_error.empty()) {
        SourceRange at = x.regex_range.file ? x.regex_range : x.where;
        if (check.re2_error_offset >= 0)
          at = literal_sub_range(at, static_cast<size_t>(check.re2_error_offset),
                                 static_cast<size_t>(check.re2_error_offset + std::max<int64_t>(1, check.re2_error_length)), false);
        err("E0402", at, fmt::format("RE2 rejects this regex: {}", check.re2_error), regex_help(check));
        return bad(x.where);
      }
      auto e = make(Op::Matches, Type::Bool, x.where);
      e.a = static_cast<int32_t>(cat_.regexes.size());
      cat_.regexes.push_back({check.re2_pattern, caseless, dotall});
      e.kids.push_back(std::move(k));
      return e;
    }
    case ExprKind::IsNull: {
      auto e = make(x.negated ? Op::IsNotNull : Op::IsNull, Type::Bool, x.where);
      e.kids.push_back(lower(*x.args[0], s));
      return e;
    }
    case ExprKind::In: {
      auto e = make(x.negated ? Op::NotIn : Op::In, Type::Bool, x.where);
      for (const auto& a : x.args) e.kids.push_back(lower(*a, s));
      Type t = e.kids[0].type;
      for (size_t i = 1; i < e.kids.size(); ++i) {
        Type k = e.kids[i].type;
        if (t != Type::Null && k != Type::Null && k != t && !(numeric(k) && numeric(t))) {
          err("E0301", x.args[i]->where, fmt::format("'in' list element is {} but the value is {}", type_name(k), type_name(t)));
          return bad(x.where);
        }
      }
      return e;
    }
    case ExprKind::Call: return lower_call(x, s);
    case ExprKind::Order: return lower_order(x, s);
    case ExprKind::QueryAggregate: {
      if (s.captures) {
        err("E0601", x.where, "queries over events and symptoms are not available in an extractor's emit");
        return bad(x.where);
      }
      Binding b;
      Scope outer = s;
      auto q = lower_query(*x.query, x.binding, x.binding_range, s, &b);
      Op op = x.text == "exists" ? Op::QueryExists : x.text == "none" ? Op::QueryNone : x.text == "count" ? Op::QueryCount
            : x.text == "nodes" ? Op::QueryNodes : x.text == "max" ? Op::QueryMax : Op::QueryMin;
      Type t = op == Op::QueryExists || op == Op::QueryNone ? Type::Bool : Type::Int;
      auto e = make(op, t, x.where);
      if (op == Op::QueryMax || op == Op::QueryMin) {
        Scope inner = outer;
        inner.bindings.push_back(b);
        inner.grouped = false;
        auto v = lower(*x.args[0], inner);
        if (!numeric(v.type) && v.type != Type::Time && v.type != Type::Duration && v.type != Type::String && v.type != Type::Null) {
          err("E0301", x.args[0]->where, fmt::format("'{}' needs an ordered value, not {}", x.text, type_name(v.type)));
          return bad(x.where);
        }
        e.type = v.type;
        e.kids.push_back(std::move(v));
      }
      // The index is taken only now: the value expression may have added
      // queries of its own.
      e.a = static_cast<int32_t>(queries_.size());
      queries_.push_back(std::move(q));
      return e;
    }
  }
  return bad(x.where);
}

std::optional<Value> Analyzer::constant_of(const ast::Expr& x) {
  switch (x.kind) {
    case ExprKind::IntLit: return Value::integer(x.int_value);
    case ExprKind::FloatLit: return Value::real(x.float_value);
    case ExprKind::DurationLit: return Value::duration(x.int_value);
    case ExprKind::StringLit: return Value::string(x.text);
    case ExprKind::BoolLit: return Value::boolean(x.bool_value);
    case ExprKind::NullLit: return Value::null();
    case ExprKind::Unary:
      if (x.op == "-") {
        auto v = constant_of(*x.args[0]);
        if (v && (v->type == Type::Int || v->type == Type::Duration)) { v->i = -v->i; return v; }
        if (v && v->type == Type::Float) { v->f = -v->f; return v; }
      }
      return std::nullopt;
    default: return std::nullopt;
  }
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

void Analyzer::register_rule_kinds(const ast::Rule& r) {
  for (const auto& a : r.actions) {
    if (a.kind == ast::ActionKind::Emit) register_kind(false, a.kind_name);
    if (a.kind == ast::ActionKind::Symptom) register_kind(true, a.kind_name);
  }
}

void Analyzer::analyze_rule(const ast::Rule& r, int32_t index) {
  ir::Rule out;
  queries_.clear();
  out.name = r.name;
  out.where = r.where;
  out.index = index;
  int stage = -1;
  for (size_t i = 0; i < ir::kStageNames.size(); ++i)
    if (r.stage == ir::kStageNames[i]) stage = static_cast<int>(i);
  if (stage < 0) {
    err("E0205", r.stage_range, fmt::format("unknown stage '{}' (stages: early, symptoms, scrub, aggregate, final, outcome, post_outcome)", r.stage),
        did_you_mean(r.stage, {"early", "symptoms", "scrub", "aggregate", "final", "outcome", "post_outcome"}));
    return;
  }
  out.stage = static_cast<ir::Stage>(stage);
  if (out.stage == ir::Stage::Extract) {
    err("E0601", r.stage_range, "the extract stage runs extractors only; give this rule a later stage");
    return;
  }
  Scope s;
  s.next_slot = &out.slot_count;
  s.slot_is_symptom = &out.slot_is_symptom;
  s.outcome_visible = out.stage == ir::Stage::PostOutcome;
  out.slot_count = 0;
  if (r.for_query) {
    Binding b;
    out.for_query = lower_query(*r.for_query, r.for_binding, r.for_binding_range, s, &b);
    s.bindings.push_back(b);
  } else {
    out.slot_count = 1;  // slot 0 stays reserved so query slots are stable
    out.slot_is_symptom.push_back(false);
  }
  for (const auto& w : r.wheres) {
    auto e = lower(*w, s);
    if (e.type != Type::Bool && e.type != Type::Null)
      err("E0301", w->where, fmt::format("a 'where' condition must be bool, not {}", type_name(e.type)));
    out.wheres.push_back(std::move(e));
  }
  if (r.has_group) {
    if (!r.for_query) err("E0304", r.group_range, "'group by' needs a 'for' binding to group");
    out.grouped = true;
    out.group_within_ns = r.group_within_ns;
    for (const auto& k : r.group_keys) out.group_keys.push_back(lower(*k, s));
  }
  s.grouped = r.has_group;
  const Binding* for_binding = r.for_query ? &s.bindings.front() : nullptr;

  auto allowed = [&](ast::ActionKind k) {
    using S = ir::Stage;
    switch (k) {
      case ast::ActionKind::Emit: return out.stage == S::Early;
      case ast::ActionKind::Symptom: return out.stage == S::Symptoms || out.stage == S::Aggregate;
      case ast::ActionKind::Scrub: return out.stage == S::Scrub || out.stage == S::Final;
      case ast::ActionKind::Demote: return out.stage == S::Final || out.stage == S::Aggregate;
      case ast::ActionKind::SetPriority:
        return out.stage == S::Symptoms || out.stage == S::Scrub || out.stage == S::Aggregate || out.stage == S::Final;
      case ast::ActionKind::Classify: return out.stage == S::Outcome;
      case ast::ActionKind::SetOutcome: return out.stage == S::PostOutcome;
    }
    return false;
  };
  static const char* action_names[] = {"emit", "symptom", "demote", "scrub", "set priority", "classify", "set outcome"};
  static const char* action_stages[] = {"early", "symptoms and aggregate", "final and aggregate", "scrub and final",
                                        "symptoms, scrub, aggregate and final", "outcome", "post_outcome"};

  auto symptom_binding = [&](const ast::Action& a) -> int32_t {
    const Binding* b = s.find(a.binding);
    if (!b) {
      err("E0202", a.binding_range, fmt::format("unknown binding '{}'", a.binding), did_you_mean(a.binding, scope_names(s, false)));
      return -1;
    }
    if (!b->symptom) {
      err("E0603", a.binding_range, fmt::format("'{}' is bound to events; only symptoms can be {}", a.binding,
                                                a.kind == ast::ActionKind::Classify ? "classified" : "changed"));
      return -1;
    }
    return b->slot;
  };

  for (const auto& a : r.actions) {
    if (!allowed(a.kind)) {
      err("E0601", a.where, fmt::format("'{}' is not allowed in stage '{}' (allowed in {})", action_names[static_cast<int>(a.kind)],
                                        r.stage, action_stages[static_cast<int>(a.kind)]));
      continue;
    }
    ir::Action act;
    act.where = a.where;
    switch (a.kind) {
      case ast::ActionKind::Emit:
      case ast::ActionKind::Symptom: {
        bool symptom = a.kind == ast::ActionKind::Symptom;
        act.kind = symptom ? ir::ActionKind::Symptom : ir::ActionKind::Emit;
        act.kind_id = register_kind(symptom, a.kind_name);
        act.on_job = a.on_job;
        if (a.node) {
          auto n = lower(*a.node, s);
          if (n.type != Type::String && n.type != Type::Null)
            err("E0301", a.node->where, fmt::format("'on' needs a node name (string), not {}", type_name(n.type)));
          act.node = std::move(n);
        } else if (!a.on_job && !for_binding) {
          err("E0602", a.kind_range, "this rule has no 'for' binding, so say where this goes: 'on job' or 'on EXPR'");
        }
        if (a.key) act.key = lower(*a.key, s);
        if (a.priority) {
          auto p = lower(*a.priority, s);
          if (p.type != Type::Int && p.type != Type::Null) err("E0301", a.priority->where, "priority must be an int");
          act.priority = std::move(p);
        }
        if (a.at) {
          auto t = lower(*a.at, s);
          if (t.type != Type::Time && t.type != Type::Null)
            err("E0301", a.at->where, fmt::format("'at' must be a time, not {}", type_name(t.type)));
          act.at = std::move(t);
        }
        std::set<std::string> seen;
        for (const auto& f : a.fields) {
          if (!seen.insert(f.name).second) {
            err("E0103", f.where, fmt::format("field '{}' is given twice", f.name));
            continue;
          }
          auto v = lower(*f.value, s);
          if (symptom && f.name == "summary") {
            if (v.type != Type::String && v.type != Type::Null) err("E0301", f.value->where, "'summary' must be a string");
            act.summary = std::move(v);
            continue;
          }
          int32_t slot = add_field(symptom, act.kind_id, f.name, v.type, f.where);
          if (slot >= 0) act.fields.push_back({slot, std::move(v)});
        }
        break;
      }
      case ast::ActionKind::Demote:
      case ast::ActionKind::Scrub: {
        act.kind = a.kind == ast::ActionKind::Demote ? ir::ActionKind::Demote : ir::ActionKind::Scrub;
        if (a.query) {
          if (!a.query->symptom) {
            err("E0603", a.query->where, "only symptoms can be demoted or scrubbed; query 'symptom ...'");
            continue;
          }
          Binding b;
          act.query = lower_query(*a.query, a.binding, a.binding_range, s, &b);
          Scope inner = s;
          inner.bindings.push_back(b);
          act.reason = lower_interpolation(a.reason, a.reason_range, inner);
        } else {
          act.target_slot = symptom_binding(a);
          act.reason = lower_interpolation(a.reason, a.reason_range, s);
        }
        break;
      }
      case ast::ActionKind::SetPriority: {
        act.kind = ir::ActionKind::SetPriority;
        act.target_slot = symptom_binding(a);
        auto v = lower(*a.value, s);
        if (v.type != Type::Int && v.type != Type::Null) err("E0301", a.value->where, "priority must be an int");
        act.value = std::move(v);
        break;
      }
      case ast::ActionKind::Classify: {
        act.kind = ir::ActionKind::Classify;
        act.target_slot = symptom_binding(a);
        if (!one_of(a.domain, kDomains))
          err("E0206", a.domain_range, fmt::format("unknown domain '{}' (hardware, software, infrastructure, user)", a.domain),
              did_you_mean(a.domain, names_of(kDomains)));
        if (a.sub_domain.empty()) err("E0206", a.domain_range, "a classification needs a sub_domain");
        act.domain = a.domain;
        act.sub_domain = a.sub_domain;
        break;
      }
      case ast::ActionKind::SetOutcome: {
        act.kind = ir::ActionKind::SetOutcome;
        if (!one_of(a.status, kStatuses))
          err("E0206", a.where, fmt::format("unknown status '{}' (attributed, ambiguous, unattributed, no_failure)", a.status),
              did_you_mean(a.status, names_of(kStatuses)));
        if (!a.domain.empty() && !one_of(a.domain, kDomains))
          err("E0206", a.domain_range, fmt::format("unknown domain '{}' (hardware, software, infrastructure, user)", a.domain),
              did_you_mean(a.domain, names_of(kDomains)));
        if (a.status == "attributed" && a.domain.empty())
          err("E0206", a.where, "'set outcome attributed' needs a domain and sub_domain");
        act.status = a.status;
        act.domain = a.domain;
        act.sub_domain = a.sub_domain;
        act.reason = lower_interpolation(a.reason, a.reason_range, s);
        break;
      }
    }
    out.actions.push_back(std::move(act));
  }
  out.queries = std::move(queries_);
  cat_.rules.push_back(std::move(out));
}

void Analyzer::analyze_scenario(const ast::Scenario& sc) {
  ir::Scenario out;
  out.title = sc.title;
  out.where = sc.where;
  out.nodes = sc.nodes;
  out.workload_id = sc.workload_id;
  if (sc.workload_id.empty()) err("E0301", sc.where, "a scenario's workload id must not be empty");
  out.scheduler = sc.scheduler;
  if (!one_of(sc.scheduler, std::array{"slurm", "kubernetes", "static"}))
    err("E0206", sc.scheduler_range, fmt::format("unknown scheduler '{}' (slurm, kubernetes, static)", sc.scheduler));
  out.terminal_state = sc.terminal_state;
  out.terminal_exit = sc.terminal_exit;
  if (!sc.terminal_state.empty() && !is_known_terminal_state(sc.terminal_state)) {
    // The outcome logic reads the state (only COMPLETED is a clean end): a
    // misspelt one would test something else than what the title says.
    auto m = closest_match(sc.terminal_state, known_terminal_states());
    if (m && edit_distance(*m, sc.terminal_state) > 2) m.reset();  // as for a context: a near miss only
    std::string msg = fmt::format("unknown terminal state '{}' (known: {})", sc.terminal_state, fmt::join(known_terminal_states(), ", "));
    const SourceRange& at = sc.terminal_range.file ? sc.terminal_range : sc.where;
    if (m) err("E0206", at, msg, fmt::format("did you mean '{}'?", *m));
    else diags_.warning("E0206", at, msg + "; only COMPLETED counts as a clean end");
  }
  if (sc.has_window) {
    out.window_start = parse_rfc3339(sc.window_start);
    out.window_end = parse_rfc3339(sc.window_end);
    if (!out.window_start || !out.window_end)
      err("E0301", sc.window_range, "scenario window bounds must be RFC 3339 times");
  }
  for (const auto& l : sc.logs) out.logs.push_back({l.host, l.source, l.text});
  for (const auto& m : sc.metrics) {
    ir::ScenarioMetric x;
    x.host = m.host;
    x.source = m.source;
    x.name = m.name;
    x.value = m.value;
    auto ts = parse_rfc3339(m.ts);
    if (!ts) err("E0301", m.where, "a scenario metric's time must be an RFC 3339 time with a zone");
    x.ts = ts.value_or(0);
    if (m.name.empty()) err("E0301", m.where, "a scenario metric needs a metric name");
    std::map<std::string, std::string> labels;
    for (const auto& [k, v] : m.labels)
      if (!labels.emplace(k, v).second) err("E0103", m.where, fmt::format("label '{}' is given twice", k));
    for (const auto& [k, v] : labels) x.labels += (x.labels.empty() ? "" : ",") + k + "=" + v;
    out.metrics.push_back(std::move(x));
  }
  if (out.nodes.empty()) {
    std::set<std::string> hosts;
    for (const auto& l : sc.logs) hosts.insert(l.host);
    for (const auto& m : sc.metrics) hosts.insert(m.host);
    out.nodes.assign(hosts.begin(), hosts.end());
  }
  if (sc.expects.empty()) err("E0503", sc.where, fmt::format("scenario '{}' names no target: add at least one 'expect'", sc.title));
  for (const auto& e : sc.expects) {
    ir::ScenarioExpect x{e.kind, e.where, e.value, e.culprits, e.kind_pattern, e.node};
    switch (e.kind) {
      case ast::ScenarioExpectKind::Status:
        if (!one_of(e.value, kStatuses))
          err("E0206", tail_range(e.where, e.value.size()), fmt::format("unknown status '{}' (attributed, ambiguous, unattributed, no_failure)", e.value),
              did_you_mean(e.value, names_of(kStatuses)));
        break;
      case ast::ScenarioExpectKind::Domain:
        if (!one_of(e.value, kDomains))
          err("E0206", tail_range(e.where, e.value.size()), fmt::format("unknown domain '{}' (hardware, software, infrastructure, user)", e.value),
              did_you_mean(e.value, names_of(kDomains)));
        break;
      case ast::ScenarioExpectKind::SymptomState:
        if (!one_of(e.value, std::array{"active", "demoted", "scrubbed"}))
          err("E0206", tail_range(e.where, e.value.size()), fmt::format("unknown symptom state '{}' (active, demoted, scrubbed)", e.value),
              did_you_mean(e.value, {"active", "demoted", "scrubbed"}));
        [[fallthrough]];
      case ast::ScenarioExpectKind::NoSymptom: {
        bool any = false;
        for (const auto& k : cat_.symptom_kinds) any = any || glob_kind_match(e.kind_pattern, k.name);
        if (!any) {
          bool wildcard = e.kind_pattern.find('*') != std::string::npos;
          err("E0203", e.where, fmt::format("symptom pattern '{}' matches no symptom kind this catalog creates", e.kind_pattern),
              did_you_mean(e.kind_pattern, wildcard ? family_patterns(true) : kind_names(true)));
        }
        break;
      }
      default: break;
    }
    out.expects.push_back(std::move(x));
  }
  cat_.scenarios.push_back(std::move(out));
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

}  // namespace

ir::Catalog analyze(std::vector<CatalogPart>& parts, Diagnostics& diags) {
  Analyzer a(diags);
  return a.run(parts);
}

}  // namespace culprit
