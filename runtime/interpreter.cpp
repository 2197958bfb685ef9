#include "runtime/interpreter.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/text_util.h"
#include "base/timestamp.h"

namespace culprit {

namespace {

Value event_field(const Event& ev, int32_t sel, const ir::Catalog& cat) {
  switch (sel) {
    case ir::kEvKind: return Value::string(cat.event_kinds[static_cast<size_t>(ev.kind)].name);
    case ir::kEvNode:
    case ir::kEvHost: return Value::string(ev.host.str());
    case ir::kEvSource: return Value::string(ev.where.source.str());
    case ir::kEvFile: return Value::string(ev.where.file.str());
    case ir::kEvLine: return Value::integer(ev.where.line);
    case ir::kEvOffset: return Value::integer(ev.where.offset);
    case ir::kEvTs: return ev.where.ts ? Value::time(*ev.where.ts) : Value::null();
    case ir::kEvText: return Value::string(ev.where.text.str());
    case ir::kEvOwnTs: return own_event_time(ev) ? Value::time(*ev.where.ts) : Value::null();
    case ir::kEvPlace: return Value::string(event_place(ev));
    case ir::kEvBoot: return ev.where.boot ? Value::duration(*ev.where.boot) : Value::null();
    default: break;
  }
  int32_t slot = cat.event_kinds[static_cast<size_t>(ev.kind)].slot(sel);
  if (slot < 0 || static_cast<size_t>(slot) >= ev.fields.size()) return Value::null();
  return ev.fields[static_cast<size_t>(slot)];
}

Value symptom_field(const Symptom& s, int32_t sel, const ir::Catalog& cat) {
  switch (sel) {
    case ir::kSyId: return Value::string(s.id);
    case ir::kSyKind: return Value::string(s.kind_name);
    case ir::kSyNode: return Value::string(s.node);
    case ir::kSyKey: return Value::string(s.key);
    case ir::kSyFirst: return s.first ? Value::time(*s.first) : Value::null();
    case ir::kSyLast: return s.last ? Value::time(*s.last) : Value::null();
    case ir::kSyCount: return Value::integer(s.count);
    case ir::kSyPriority: return Value::integer(s.priority);
    case ir::kSySummary: return Value::string(s.summary);
    case ir::kSyOwnFirst: return s.own_first ? Value::time(*s.own_first) : Value::null();
    case ir::kSyPlace: return s.place.empty() ? Value::null() : Value::string(s.place);
    case ir::kSyPlaceLine:
    case ir::kSyLine: return s.place.empty() ? Value::null() : Value::integer(s.place_line);
    case ir::kSyPlaceBoot: return s.place_boot ? Value::duration(*s.place_boot) : Value::null();
    case ir::kSyFile: return s.place.empty() ? Value::null() : Value::string(s.file);
    case ir::kSySource: return s.place.empty() ? Value::null() : Value::string(s.source);
    default: break;
  }
  int32_t slot = cat.symptom_kinds[static_cast<size_t>(s.kind)].slot(sel);
  if (slot < 0 || static_cast<size_t>(slot) >= s.fields.size()) return Value::null();
  return s.fields[static_cast<size_t>(slot)];
}

std::optional<int64_t> parse_int_text(std::string_view s, int base) {
  s = trim(s);
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (base == 16 && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  if (base == 10 && v > static_cast<uint64_t>(INT64_MAX) + (neg ? 1 : 0)) return std::nullopt;
  // Negate in unsigned arithmetic so INT64_MIN's magnitude does not overflow.
  return static_cast<int64_t>(neg ? 0 - v : v);
}

std::optional<double> parse_float_text(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

double as_double(const Value& v) { return v.type == Type::Float ? v.f : static_cast<double>(v.i); }

int compare(const Value& a, const Value& b) {
  if ((a.type == Type::Float || b.type == Type::Float) && a.type != Type::String) {
    double x = as_double(a), y = as_double(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.type == Type::String) return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  if (a.type == Type::Bool) return a.b == b.b ? 0 : a.b ? 1 : -1;
  return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
}

Value arithmetic(ir::Op op, const Value& a, const Value& b, Type result) {
  if (a.is_null() || b.is_null()) return Value::null();
  if (result == Type::String) return Value::string(a.s + b.s);
  if (result == Type::Float) {
    double x = as_double(a), y = as_double(b);
    double r = op == ir::Op::Add ? x + y : op == ir::Op::Sub ? x - y : x * y;
    return std::isfinite(r) ? Value::real(r) : Value::null();
  }
  // Integer-like results wrap on overflow (two's complement), as native code would.
  uint64_t x = static_cast<uint64_t>(a.i), y = static_cast<uint64_t>(b.i);
  uint64_t r = 0;
  switch (op) {
    case ir::Op::Add: r = x + y; break;
    case ir::Op::Sub: r = x - y; break;
    case ir::Op::Mul: r = x * y; break;
    default: break;
  }
  Value v;
  v.type = result;
  v.i = static_cast<int64_t>(r);
  return v;
}

Value integer_op(ir::Op op, const Value& a, const Value& b) {
  if (a.is_null() || b.is_null()) return Value::null();
  int64_t x = a.i, y = b.i;
  switch (op) {
    case ir::Op::Mod:
      if (y == 0 || (x == INT64_MIN && y == -1)) return Value::null();
      return Value::integer(x % y);
    case ir::Op::Shl:
      if (y < 0 || y > 63) return Value::null();
      return Value::integer(static_cast<int64_t>(static_cast<uint64_t>(x) << y));
    case ir::Op::Shr:
      // Logical shift: these operands are register words, not signed quantities.
      if (y < 0 || y > 63) return Value::null();
      return Value::integer(static_cast<int64_t>(static_cast<uint64_t>(x) >> y));
    case ir::Op::BitAnd: return Value::integer(x & y);
    case ir::Op::BitXor: return Value::integer(x ^ y);
    case ir::Op::BitOr: return Value::integer(x | y);
    default: return Value::null();
  }
}

Value call(const ir::Expr& e, Env& env) {
  auto arg = [&](size_t i) { return evaluate(e.kids[i], env); };
  switch (static_cast<ir::Builtin>(e.a)) {
    case ir::Builtin::Int: {
      Value v = arg(0);
      if (v.type == Type::Int) return v;
      if (v.type == Type::Float) {
        if (!std::isfinite(v.f) || std::fabs(v.f) >= 9.2e18) return Value::null();
        return Value::integer(static_cast<int64_t>(v.f));
      }
      if (v.type != Type::String) return Value::null();
      auto r = parse_int_text(v.s, 10);
      return r ? Value::integer(*r) : Value::null();
    }
    case ir::Builtin::Hex: {
      Value v = arg(0);
      if (v.type == Type::Int) return v;
      if (v.type != Type::String) return Value::null();
      auto r = parse_int_text(v.s, 16);
      return r ? Value::integer(*r) : Value::null();
    }
    case ir::Builtin::Float: {
      Value v = arg(0);
      if (v.type == Type::Float) return v;
      if (v.type == Type::Int) return Value::real(static_cast<double>(v.i));
      if (v.type != Type::String) return Value::null();
      auto r = parse_float_text(v.s);
      return r ? Value::real(*r) : Value::null();
    }
    case ir::Builtin::Duration: {
      Value v = arg(0);
      std::string unit = e.kids[1].constant.s;
      int64_t mul = unit == "ns" ? 1 : unit == "us" ? 1000 : unit == "ms" ? 1000000 : unit == "s" ? 1000000000LL
                  : unit == "m" ? 60000000000LL : 3600000000000LL;
      double n = 0;
      if (v.type == Type::Int) n = static_cast<double>(v.i);
      else if (v.type == Type::Float) n = v.f;
      else if (v.type == Type::String) {
        auto f = parse_float_text(v.s);
        if (!f) return Value::null();
        n = *f;
      } else {
        return Value::null();
      }
      double ns = n * static_cast<double>(mul);
      if (!std::isfinite(ns) || std::fabs(ns) >= 9.2e18) return Value::null();
      if (v.type == Type::Int && v.i != 0 && std::llabs(v.i) < INT64_MAX / mul) return Value::duration(v.i * mul);
      return Value::duration(static_cast<int64_t>(std::llround(ns)));
    }
    case ir::Builtin::Seconds: {
      Value v = arg(0);
      return v.is_null() ? v : Value::real(static_cast<double>(v.i) / 1e9);
    }
    case ir::Builtin::Lower:
    case ir::Builtin::Upper: {
      Value v = arg(0);
      if (v.is_null()) return v;
      bool up = static_cast<ir::Builtin>(e.a) == ir::Builtin::Upper;
      for (char& c : v.s) c = static_cast<char>(up ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
      return v;
    }
    case ir::Builtin::Trim: {
      Value v = arg(0);
      return v.is_null() ? v : Value::string(std::string(trim(v.s)));
    }
    case ir::Builtin::Len: {
      Value v = arg(0);
      return v.is_null() ? v : Value::integer(static_cast<int64_t>(v.s.size()));
    }
    case ir::Builtin::Contains:
    case ir::Builtin::StartsWith:
    case ir::Builtin::EndsWith: {
      Value a = arg(0), b = arg(1);
      if (a.is_null() || b.is_null()) return Value::null();
      auto f = static_cast<ir::Builtin>(e.a);
      bool r = f == ir::Builtin::Contains ? contains_text(a.s, b.s)
             : f == ir::Builtin::StartsWith ? a.s.rfind(b.s, 0) == 0
             : a.s.size() >= b.s.size() && a.s.compare(a.s.size() - b.s.size(), b.s.size(), b.s) == 0;
      return Value::boolean(r);
    }
    case ir::Builtin::Str: return Value::string(value_to_text(arg(0)));
    case ir::Builtin::Coalesce:
      for (size_t i = 0; i < e.kids.size(); ++i) {
        Value v = arg(i);
        if (!v.is_null()) return v;
      }
      return Value::null();
    case ir::Builtin::If: {
      // Only the chosen branch is evaluated; int/float branches meet as float.
      Value v = evaluate(e.kids[evaluate(e.kids[0], env).truthy() ? 1 : 2], env);
      if (e.type == Type::Float && v.type == Type::Int) return Value::real(static_cast<double>(v.i));
      return v;
    }
    case ir::Builtin::Covered: {
      Value n = arg(1);
      if (n.is_null() || !env.world) return Value::boolean(false);
      return Value::boolean(env.world->covered(e.kids[0].constant.s, n.s));
    }
    case ir::Builtin::IsNode: {
      Value n = arg(0);
      return Value::boolean(n.type == Type::String && env.world && env.world->is_node(n.s));
    }
    case ir::Builtin::RankNode: {
      Value r = arg(0);
      if (r.type != Type::Int || !env.world) return Value::null();
      std::string_view node = env.world->rank_node(r.i);
      return node.empty() ? Value::null() : Value::string(std::string(node));
    }
    case ir::Builtin::HostNode: {
      Value h = arg(0);
      if (h.type != Type::String || !env.world) return Value::null();
      std::string_view node = env.world->host_node(h.s);
      return node.empty() ? Value::null() : Value::string(std::string(node));
    }
    case ir::Builtin::Gaps: {
      Value s = arg(0);
      if (s.type != Type::String) return Value::null();
      auto g = rank_gaps(s.s);
      return g ? Value::string(std::move(*g)) : Value::null();
    }
    case ir::Builtin::Coverage:
      return Value::real(env.world ? env.world->coverage(e.kids[0].constant.s) : 0.0);
    case ir::Builtin::Time: {
      Value v = arg(0);
      if (v.type != Type::String) return Value::null();
      auto t = parse_time_text(v.s);
      return t ? Value::time(*t) : Value::null();
    }
  }
  return Value::null();
}

Value query(const ir::Expr& e, Env& env) {
  const ir::Query& q = env.rule->queries[static_cast<size_t>(e.a)];
  if (!env.world) return Value::null();
  bool keep = false;
  if (const Value* kept = env.world->recall(q, env, &keep)) return *kept;
  int64_t count = 0;
  DistinctNodes nodes;
  std::optional<Value> best;
  bool stop_at_first = e.op == ir::Op::QueryExists || e.op == ir::Op::QueryNone;
  Item saved = env.slots[static_cast<size_t>(q.bind_slot)];
  auto visit = [&]() {
    if (!passes_filter(q, env)) return true;
    ++count;
    const Item& it = env.slots[static_cast<size_t>(q.bind_slot)];
    if (e.op == ir::Op::QueryNodes) nodes.add(it.node());
    if (e.op == ir::Op::QueryMax || e.op == ir::Op::QueryMin) {
      Value v = evaluate(e.kids[0], env);
      if (!v.is_null()) {
        int c = best ? compare(v, *best) : 0;
        if (!best || (e.op == ir::Op::QueryMax ? c > 0 : c < 0)) best = std::move(v);
      }
    }
    return !stop_at_first;
  };
  if (!env.world->out_of_budget()) env.world->candidates(q, env, visit);
  env.slots[static_cast<size_t>(q.bind_slot)] = saved;
  Value result;
  switch (e.op) {
    case ir::Op::QueryExists: result = Value::boolean(count > 0); break;
    case ir::Op::QueryNone: result = Value::boolean(count == 0); break;
    case ir::Op::QueryCount: result = Value::integer(count); break;
    case ir::Op::QueryNodes: result = Value::integer(static_cast<int64_t>(nodes.count())); break;
    default: result = best ? std::move(*best) : Value::null(); break;
  }
  if (keep) env.world->remember(q, env, result);
  return result;
}

Value group_aggregate(const ir::Expr& e, Env& env) {
  if (!env.group || env.group->empty()) return Value::null();
  const auto& g = *env.group;
  switch (e.op) {
    case ir::Op::GroupCount: return Value::integer(static_cast<int64_t>(g.size()));
    case ir::Op::GroupFirstTs:
    case ir::Op::GroupLastTs: {
      std::optional<int64_t> best;
      for (const auto& it : g) {
        auto t = it.time();
        if (t && (!best || (e.op == ir::Op::GroupFirstTs ? *t < *best : *t > *best))) best = t;
      }
      return best ? Value::time(*best) : Value::null();
    }
    case ir::Op::GroupDistinct:
    case ir::Op::GroupValues: {
      Item saved = env.slots[0];
      std::vector<Value> vals;
      for (const auto& it : g) {
        env.slots[0] = it;
        Value v = evaluate(e.kids[0], env);
        if (!v.is_null()) vals.push_back(std::move(v));
      }
      env.slots[0] = saved;
      std::sort(vals.begin(), vals.end(), value_less);
      vals.erase(std::unique(vals.begin(), vals.end(), values_equal), vals.end());
      if (e.op == ir::Op::GroupDistinct) return Value::integer(static_cast<int64_t>(vals.size()));
      std::string out;
      for (const auto& v : vals) out += (out.empty() ? "" : ",") + value_to_text(v);
      return Value::string(out);
    }
    default: return Value::null();
  }
}

}  // namespace

int compare_values(const Value& a, const Value& b) { return compare(a, b); }
bool own_event_time(const Event& ev) {
  return ev.where.ts.has_value() && ev.where.ts_origin != "inherited";
}

std::string event_place(const Event& ev) {
  return ev.where.host + "/" + ev.where.source + "/" + ev.where.file;
}

// time(s): only the forms that write a year (ISO 8601 / RFC 3339, as Slurm,
// Kubernetes and journald do); a year-less stamp would need the window to be
// placed, and the text of a message has none.
std::optional<int64_t> parse_time_text(std::string_view s) {
  s = trim(s);
  if (s.size() < 19 || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
  LineTime t = parse_line_time(s, make_year_hint(std::nullopt, std::nullopt, 1970));
  if (!t.has_wall) return std::nullopt;
  return t.wall_ns;
}


void DistinctNodes::add(std::string_view node) {
  for (size_t i = 0; i < std::min(n_, kInline); ++i)
    if (inline_[i] == node) return;
  if (n_ < kInline) {
    inline_[n_++] = node;
    return;
  }
  ++n_;
  spill_.push_back(node);  // deduplicated in count()
}

size_t DistinctNodes::count() {
  if (n_ <= kInline) return n_;
  // add() keeps names already inline out of the spill.
  std::sort(spill_.begin(), spill_.end());
  spill_.erase(std::unique(spill_.begin(), spill_.end()), spill_.end());
  return kInline + spill_.size();
}
std::optional<int64_t> parse_integer_text(std::string_view s, int base) { return parse_int_text(s, base); }
std::optional<double> parse_real_text(std::string_view s) { return parse_float_text(s); }

bool within_window(const ir::Query& q, const Env& env, std::optional<int64_t> t) {
  if (!q.has_within) return true;
  std::optional<int64_t> anchor = env.slots[static_cast<size_t>(q.anchor_slot)].time();
  if (!t || !anchor) return false;
  int64_t d = *t - *anchor;
  switch (q.direction) {
    case ir::WithinDirection::Before: return d <= 0 && -d <= q.within_ns;
    case ir::WithinDirection::After: return d >= 0 && d <= q.within_ns;
    case ir::WithinDirection::Around: return (d < 0 ? -d : d) <= q.within_ns;
  }
  return false;
}

bool passes_filter(const ir::Query& q, Env& env) {
  if (!q.filter) return true;
  return run_expression(*q.filter, env).truthy();
}

namespace {
// Native code's path: `out` is the only object returned, so it is built in
// the caller's slot (NRVO) instead of being moved there, which would cost
// the hot path a Value move and destruction per call.
Value native_or_interpreted(const ir::Expr& e, Env& env) {
  Value out;
  if (!env.native->run(e, env, out)) out = evaluate(e, env);
  return out;
}
}  // namespace

Value run_expression(const ir::Expr& e, Env& env) {
  // Both operands are prvalues: whichever runs constructs the result in place.
  return env.native ? native_or_interpreted(e, env) : evaluate(e, env);
}

void run_expression_into(const ir::Expr& e, Env& env, Value& out) {
  if (env.native && env.native->run(e, env, out)) return;
  out = evaluate(e, env);
}

Value evaluate(const ir::Expr& e, Env& env) {
  using ir::Op;
  switch (e.op) {
    case Op::Const: return e.constant;
    case Op::Capture: {
      if (!env.captures || static_cast<size_t>(e.a) >= env.captures->size()) return Value::null();
      const auto& c = (*env.captures)[static_cast<size_t>(e.a)];
      return c ? Value::string(std::string(*c)) : Value::null();
    }
    case Op::EventField: {
      const Item& it = env.slots[static_cast<size_t>(e.a)];
      return it.event ? event_field(*it.event, e.b, *env.catalog) : Value::null();
    }
    case Op::SymptomField: {
      const Item& it = env.slots[static_cast<size_t>(e.a)];
      return it.symptom ? symptom_field(*it.symptom, e.b, *env.catalog) : Value::null();
    }
    case Op::Terminal: return env.world ? env.world->terminal(e.a) : Value::null();
    case Op::Outcome: return env.world ? env.world->outcome(e.a) : Value::null();
    case Op::Workload: return env.world ? env.world->workload(e.a) : Value::null();
    case Op::Neg: {
      Value v = evaluate(e.kids[0], env);
      if (v.is_null()) return v;
      if (v.type == Type::Float) v.f = -v.f;
      else v.i = static_cast<int64_t>(0 - static_cast<uint64_t>(v.i));
      return v;
    }
    case Op::Not: {
      Value v = evaluate(e.kids[0], env);
      return Value::boolean(!v.truthy());
    }
    case Op::Add:
    case Op::Sub:
    case Op::Mul: return arithmetic(e.op, evaluate(e.kids[0], env), evaluate(e.kids[1], env), e.type);
    case Op::Mod:
    case Op::Shl:
    case Op::Shr:
    case Op::BitAnd:
    case Op::BitXor:
    case Op::BitOr: return integer_op(e.op, evaluate(e.kids[0], env), evaluate(e.kids[1], env));
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge: {
      Value a = evaluate(e.kids[0], env), b = evaluate(e.kids[1], env);
      if (a.is_null() || b.is_null()) return Value::boolean(false);
      int c = compare(a, b);
      bool r = e.op == Op::Eq ? c == 0 : e.op == Op::Ne ? c != 0 : e.op == Op::Lt ? c < 0
             : e.op == Op::Le ? c <= 0 : e.op == Op::Gt ? c > 0 : c >= 0;
      return Value::boolean(r);
    }
    case Op::And: {
      if (!evaluate(e.kids[0], env).truthy()) return Value::boolean(false);
      return Value::boolean(evaluate(e.kids[1], env).truthy());
    }
    case Op::Or: {
      if (evaluate(e.kids[0], env).truthy()) return Value::boolean(true);
      return Value::boolean(evaluate(e.kids[1], env).truthy());
    }
    case Op::Matches: {
      Value v = evaluate(e.kids[0], env);
      if (v.is_null() || !env.regexes) return Value::boolean(false);
      const auto& re = (*env.regexes)[static_cast<size_t>(e.a)];
      return Value::boolean(re && RE2::PartialMatch(v.s, *re));
    }
    case Op::IsNull: return Value::boolean(evaluate(e.kids[0], env).is_null());
    case Op::IsNotNull: return Value::boolean(!evaluate(e.kids[0], env).is_null());
    case Op::In:
    case Op::NotIn: {
      Value v = evaluate(e.kids[0], env);
      if (v.is_null()) return Value::boolean(false);
      bool found = false;
      for (size_t i = 1; i < e.kids.size() && !found; ++i) {
        Value o = evaluate(e.kids[i], env);
        found = !o.is_null() && compare(v, o) == 0 && (v.type == o.type || (v.type != Type::String && o.type != Type::String));
      }
      return Value::boolean(e.op == Op::In ? found : !found);
    }
    case Op::Call: return call(e, env);
    case Op::QueryExists:
    case Op::QueryNone:
    case Op::QueryCount:
    case Op::QueryNodes:
    case Op::QueryMax:
    case Op::QueryMin: return query(e, env);
    case Op::GroupCount:
    case Op::GroupDistinct:
    case Op::GroupValues:
    case Op::GroupFirstTs:
    case Op::GroupLastTs: return group_aggregate(e, env);
    case Op::Interpolate: {
      std::string out;
      for (const auto& k : e.kids) {
        Value v = evaluate(k, env);
        out += v.is_null() ? std::string("?") : value_to_text(v);
      }
      return Value::string(out);
    }
  }
  return Value::null();
}

}  // namespace culprit
