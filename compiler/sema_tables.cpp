// Semantic analysis, tables pass: each `table` is checked (one cell per
// column in every row, one type per column), and the two ways rules read a
// table are lowered here: lookup(TABLE, COLUMN, VALUE, RESULT) in an
// expression, and (?&TABLE.COLUMN) in a regex.
//
// Both lower to what the IR already has, so no executor knows about tables:
// a lookup is a chain of `if(VALUE in [keys...], result, ...)`, one link per
// distinct non-null result; a column reference is an alternation of the
// column's values. The interpreter, the JIT and the catalog image run them
// as they run any other `if`, `in` and regex.

#include "compiler/sema_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/suggest.h"
#include "compiler/regex_check.h"

namespace culprit::sema_internal {

namespace {

// A cell as the text a regex must match: a string as is, an int in decimal.
std::string cell_text(const Value& v) { return v.type == Type::Int ? std::to_string(v.i) : v.s; }

// `s` as a regex that matches exactly `s`, in the syntax both RE2 and
// Hyperscan read: only the metacharacters are escaped, so the pattern stays
// readable (`culprit match`, diagnostics) and its literals stay literals
// for the scanner's prefilter.
std::string regex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\.^$|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

void Analyzer::analyze_table(const ast::Table& t) {
  auto [it, inserted] = tables_.emplace(t.name, TableDef{&t, {}});
  if (!inserted) {
    const auto& first = it->second.table->where;
    err("E0104", t.where, fmt::format("table '{}' is already defined at {}:{}", t.name, first.file->path, first.line));
    return;
  }
  auto& def = it->second;
  std::map<std::string, SourceRange> names;
  for (const auto& [c, where] : t.columns) {
    auto [n, fresh] = names.emplace(c, where);
    if (!fresh)
      err("E0104", where, fmt::format("table '{}' has two columns named '{}' (the first at column {})", t.name, c, n->second.col));
  }
  def.types.assign(t.columns.size(), Type::Null);
  std::vector<const ast::TableCell*> first_typed(t.columns.size(), nullptr);
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    if (row.size() != t.columns.size()) {
      err("E0105", t.row_ranges[r],
          fmt::format("this row of '{}' has {} cell{} but the table has {} column{}", t.name, row.size(),
                      row.size() == 1 ? "" : "s", t.columns.size(), t.columns.size() == 1 ? "" : "s"),
          "write null for a cell without a value");
      continue;
    }
    for (size_t c = 0; c < row.size(); ++c) {
      Type ct = row[c].value.type;
      if (ct == Type::Null) continue;
      if (def.types[c] == Type::Null) {
        def.types[c] = ct;
        first_typed[c] = &row[c];
      } else if (def.types[c] != ct) {
        diags_.error("E0106", row[c].where,
            fmt::format("column '{}' of '{}' holds {} values, but this cell is {}", t.columns[c].first, t.name,
                        type_name(def.types[c]), type_name(ct)),
            {}, {{first_typed[c]->where, fmt::format("the column's first value, {}", type_name(def.types[c]))}});
      }
    }
  }
}

const Analyzer::TableDef* Analyzer::find_table(const std::string& name, const SourceRange& where) {
  auto it = tables_.find(name);
  if (it != tables_.end()) return &it->second;
  std::vector<std::string> names;
  for (const auto& [n, def] : tables_) names.push_back(n);
  err("E0210", where, fmt::format("unknown table '{}'", name), did_you_mean(name, names));
  return nullptr;
}

int Analyzer::find_column(const TableDef& t, const std::string& column, const SourceRange& where) {
  std::vector<std::string> names;
  for (size_t c = 0; c < t.table->columns.size(); ++c) {
    if (t.table->columns[c].first == column) return static_cast<int>(c);
    names.push_back(t.table->columns[c].first);
  }
  err("E0210", where, fmt::format("table '{}' has no column '{}'", t.table->name, column), did_you_mean(column, names));
  return -1;
}

// lookup(TABLE, COLUMN, VALUE, RESULT): the RESULT cell of the row whose
// COLUMN cell equals VALUE; null when no row has it (or VALUE is null, or
// that row's RESULT is null). COLUMN must not hold a value twice (E0107):
// which of two rows a lookup meant is not something to leave to row order.
//
// Lowered to `if(VALUE in [keys of result 1], result 1, if(VALUE in [keys
// of result 2], result 2, ... null))`: one link per distinct result, so a
// table of a hundred rows with five meanings is five `in` tests. Rows with
// a null result need no link (null is what falls out of the chain). With
// no link at all the lookup is the constant null, typed null (executors take
// a constant's type from its value).
ir::Expr Analyzer::lower_lookup(const ast::Expr& x, Scope& s) {
  if (x.args.size() != 4) {
    err("E0302", x.where, "'lookup' takes 4 arguments: lookup(TABLE, COLUMN, VALUE, RESULT_COLUMN)");
    return bad(x.where);
  }
  auto value = lower(*x.args[2], s);
  for (size_t i : {0, 1, 3})
    if (x.args[i]->kind != ExprKind::Name) {
      err("E0301", x.args[i]->where,
          fmt::format("argument {} of 'lookup' is {} name, written bare", i + 1, i == 0 ? "a table" : "a column"));
      return bad(x.where);
    }
  const TableDef* t = find_table(x.args[0]->text, x.args[0]->where);
  if (!t) return bad(x.where);
  int key = find_column(*t, x.args[1]->text, x.args[1]->where);
  int res = find_column(*t, x.args[3]->text, x.args[3]->where);
  if (key < 0 || res < 0) return bad(x.where);
  Type kt = t->types[static_cast<size_t>(key)], rt = t->types[static_cast<size_t>(res)];
  if (value.type != Type::Null && kt != Type::Null && value.type != kt && !(numeric(value.type) && numeric(kt))) {
    err("E0301", x.args[2]->where,
        fmt::format("column '{}' of '{}' holds {} values; this value is {}", x.args[1]->text, t->table->name, type_name(kt),
                    type_name(value.type)));
    return bad(x.where);
  }
  // Keys in row order, grouped by their result, each group in the order of
  // its first row.
  std::vector<std::pair<Value, std::vector<const ast::TableCell*>>> groups;
  std::map<std::string, const ast::TableCell*> seen;
  bool ok = true;
  for (const auto& row : t->table->rows) {
    if (row.size() != t->table->columns.size()) continue;  // E0105, reported
    const auto& k = row[static_cast<size_t>(key)];
    const auto& r = row[static_cast<size_t>(res)];
    if (k.value.is_null()) continue;
    auto [prev, fresh] = seen.emplace(cell_text(k.value), &k);
    if (!fresh) {
      diags_.error("E0107", x.args[1]->where,
          fmt::format("column '{}' of '{}' holds {} twice, so a lookup by it is ambiguous", x.args[1]->text,
                      t->table->name,
                      k.value.type == Type::String ? "\"" + k.value.s + "\"" : value_to_text(k.value)),
          "look up by a column whose values are unique, or remove the duplicate row",
          {{prev->second->where, "here"}, {k.where, "and here"}});
      ok = false;
      continue;
    }
    if (r.value.is_null()) continue;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& p) { return values_equal(p.first, r.value); });
    if (g == groups.end()) groups.push_back({r.value, {}}), g = groups.end() - 1;
    g->second.push_back(&k);
  }
  if (!ok) return bad(x.where);
  // One chain of at most kChain links per chunk of results; chunks under a
  // tree of coalesce() of at most kChain each. Every evaluator recurses over
  // the expression, so a table of a thousand meanings must not make a
  // thousand-deep chain (the parser's expr_depth limit exists for them).
  constexpr size_t kChain = 16;
  std::vector<ir::Expr> chunks;
  for (size_t end = groups.size(); end > 0;) {
    size_t begin = end > kChain ? end - kChain : 0;
    ir::Expr out = make(Op::Const, Type::Null, x.where);
    for (size_t g = end; g-- > begin;) {
      auto in = make(Op::In, Type::Bool, x.where);
      in.kids.push_back(value);
      for (const auto* k : groups[g].second) {
        auto c = make(Op::Const, k->value.type, k->where);
        c.constant = k->value;
        in.kids.push_back(std::move(c));
      }
      auto then = make(Op::Const, rt, x.args[3]->where);
      then.constant = groups[g].first;
      auto link = make(Op::Call, rt, x.where);
      link.a = static_cast<int32_t>(ir::Builtin::If);
      link.kids.push_back(std::move(in));
      link.kids.push_back(std::move(then));
      link.kids.push_back(std::move(out));
      out = std::move(link);
    }
    chunks.insert(chunks.begin(), std::move(out));
    end = begin;
  }
  if (chunks.empty()) return make(Op::Const, Type::Null, x.where);
  while (chunks.size() > 1) {
    std::vector<ir::Expr> up;
    for (size_t i = 0; i < chunks.size(); i += kChain) {
      auto c = make(Op::Call, rt, x.where);
      c.a = static_cast<int32_t>(ir::Builtin::Coalesce);
      for (size_t j = i; j < std::min(chunks.size(), i + kChain); ++j) c.kids.push_back(std::move(chunks[j]));
      up.push_back(std::move(c));
    }
    chunks = std::move(up);
  }
  return std::move(chunks.front());
}

std::optional<std::string> Analyzer::expand_table_refs(const std::string& regex, const SourceRange& lit) {
  bool ok = true;
  std::string out = rewrite_outside_classes(regex, [&](size_t i, std::string& out) -> size_t {
    if (regex.compare(i, 3, "(?&") != 0) return std::string::npos;
    // (?&TABLE.COLUMN) or (?&TABLE.COLUMN[WHERE]): WHERE names a column
    // whose cell must be non-null for the row's value to be included.
    size_t close = regex.find(')', i);
    size_t dot = regex.find('.', i);
    SourceRange at = literal_sub_range(lit, i, close == std::string::npos ? regex.size() : close + 1, false);
    auto fail = [&]() {
      ok = false;
      return close == std::string::npos ? regex.size() - 1 : close;
    };
    if (close == std::string::npos || dot == std::string::npos || dot > close) {
      err("E0210", at, "'(?&' in a regex names a table column: write (?&TABLE.COLUMN)");
      ok = false;
      return regex.size() - 1;  // the rest is not read
    }
    size_t open = regex.find('[', dot);
    bool filtered = open != std::string::npos && open < close;
    if (filtered && regex[close - 1] != ']') {
      err("E0210", at, "a column reference's filter is written (?&TABLE.COLUMN[OTHER_COLUMN])");
      ok = false;
      return regex.size() - 1;
    }
    size_t col_end = filtered ? open : close;
    std::string table = regex.substr(i + 3, dot - i - 3), column = regex.substr(dot + 1, col_end - dot - 1);
    std::string filter = filtered ? regex.substr(open + 1, close - 1 - open - 1) : std::string();
    const TableDef* t = find_table(table, literal_sub_range(lit, i + 3, dot, false));
    if (!t) return fail();
    int col = find_column(*t, column, literal_sub_range(lit, dot + 1, col_end, false));
    int when = filtered ? find_column(*t, filter, literal_sub_range(lit, open + 1, close - 1, false)) : -1;
    if (col < 0 || (filtered && when < 0)) return fail();
    // Longest first: RE2 takes the first alternative that matches, so a
    // value that is a prefix of another ("out of memory" of "out of memory
    // on device") must come after it. Empty values would match everywhere.
    std::set<std::string> values;
    for (const auto& row : t->table->rows)
      if (row.size() == t->table->columns.size() && !row[static_cast<size_t>(col)].value.is_null() &&
          (when < 0 || !row[static_cast<size_t>(when)].value.is_null()))
        if (auto v = cell_text(row[static_cast<size_t>(col)].value); !v.empty()) values.insert(v);
    std::vector<std::string> sorted(values.begin(), values.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    if (sorted.empty()) {
      err("E0210", at, fmt::format("column '{}' of '{}' has no value to match{}", column, table,
                                   filtered ? " where '" + filter + "' is given" : ""));
      return fail();
    }
    out += "(?:";
    for (size_t k = 0; k < sorted.size(); ++k) out += (k ? "|" : "") + regex_escape(sorted[k]);
    out += ")";
    return close;
  });
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace culprit::sema_internal
