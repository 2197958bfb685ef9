// Semantic analysis, temporal order: `Y [not] before|after X [± D]`
// (docs/language.md §6.1) is lowered onto existing operations and the hidden
// fields kEvOwnTs/kEvPlace and kSyOwnFirst/kSyPlace/kSyPlaceLine, so every
// executor agrees by construction.

#include "compiler/sema_internal.h"

#include <fmt/format.h>

namespace culprit::sema_internal {

ir::Expr Analyzer::item_field(const Binding& b, int32_t ev_sel, int32_t sy_sel, Type t, const SourceRange& w) {
  auto e = make(b.symptom ? Op::SymptomField : Op::EventField, t, w);
  e.a = b.slot;
  e.b = b.symptom ? sy_sel : ev_sel;
  return e;
}

ir::Expr Analyzer::own_time(const OrderOperand& o) {
  return o.item ? item_field(*o.item, ir::kEvOwnTs, ir::kSyOwnFirst, Type::Time, o.where) : o.time;
}

ir::Expr Analyzer::any_time(const OrderOperand& o) {
  return o.item ? item_field(*o.item, ir::kEvTs, ir::kSyFirst, Type::Time, o.where) : o.time;
}

ir::Expr Analyzer::unary(Op op, Type t, ir::Expr k) {
  auto e = make(op, t, k.where);
  e.kids.push_back(std::move(k));
  return e;
}

ir::Expr Analyzer::binary(Op op, Type t, ir::Expr l, ir::Expr r) {
  auto e = make(op, t, l.where);
  e.kids.push_back(std::move(l));
  e.kids.push_back(std::move(r));
  return e;
}

ir::Expr Analyzer::builtin(ir::Builtin fn, Type t, std::vector<ir::Expr> kids, const SourceRange& w) {
  auto e = make(Op::Call, t, w);
  e.a = static_cast<int32_t>(fn);
  e.kids = std::move(kids);
  return e;
}

// own time if known, else the (possibly inherited) time: the time of an
// item compared with a plain time expression.
ir::Expr Analyzer::best_time(const OrderOperand& o) {
  if (!o.item) return o.time;
  std::vector<ir::Expr> k;
  k.push_back(own_time(o));
  k.push_back(any_time(o));
  return builtin(ir::Builtin::Coalesce, Type::Time, std::move(k), o.where);
}

bool Analyzer::order_operand(const ast::Expr& x, Scope& s, OrderOperand& out) {
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

ir::Expr Analyzer::lower_order(const ast::Expr& x, Scope& s) {
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

}  // namespace culprit::sema_internal
