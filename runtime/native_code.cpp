#include "runtime/native_code.h"

#include <re2/re2.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <forward_list>
#include <memory>

#include "compiler/jit/cache.h"
#include "base/text_util.h"

namespace culprit {

// The generated code addresses CulpritJitValue as {i32, i32, i64, double, ptr, i64}.
static_assert(offsetof(CulpritJitValue, type) == 0 && offsetof(CulpritJitValue, i) == 8 &&
              offsetof(CulpritJitValue, f) == 16 && offsetof(CulpritJitValue, s) == 24 &&
              offsetof(CulpritJitValue, n) == 32 && sizeof(CulpritJitValue) == 40);

namespace {

// Per top-level call: the Env being evaluated and storage for strings that
// helpers create (freed when the call returns, after its result is copied).
// Most calls make a few short strings (a concatenation, a lower-cased
// field), so the first kInline bytes live in the context itself, on the
// caller's stack: no allocation per string. Bytes handed out never move.
struct CallContext {
  explicit CallContext(Env* e) : env(e) {}
  CallContext(const CallContext&) = delete;
  CallContext& operator=(const CallContext&) = delete;

  Env* env;

  // `n` bytes that stay put until the call returns.
  char* allocate(size_t n) {
    if (n > left_) {
      const size_t size = std::max<size_t>(2 * n, kBlock);  // room to extend() a long string once
      blocks_.push_front(std::make_unique<char[]>(size));
      next_ = blocks_.front().get();
      left_ = size;
    }
    char* p = next_;
    next_ += n;
    left_ -= n;
    return p;
  }
  // Grows the last allocation, [p, p + n), by m bytes if it is the last
  // one and there is room.
  bool extend(const char* p, size_t n, size_t m) {
    if (p + n != next_ || m > left_) return false;
    next_ += m;
    left_ -= m;
    return true;
  }
  std::string_view keep(std::string_view s) {
    if (s.empty()) return {};
    char* p = allocate(s.size());
    std::memcpy(p, s.data(), s.size());
    return {p, s.size()};
  }

 private:
  static constexpr size_t kInline = 1024, kBlock = 16384;
  char inline_[kInline];
  char* next_ = inline_;
  size_t left_ = kInline;
  std::forward_list<std::unique_ptr<char[]>> blocks_;
};

CallContext& context_of(void* ctx) { return *static_cast<CallContext*>(ctx); }

// Every member is written, so generated code never reads undefined bytes.
// (Generated code itself writes only the tag and that type's payload member:
// see to_jv in compiler/jit/codegen.cpp; every reader here looks at a payload
// member only under its tag.)
void set_null(CulpritJitValue* out) {
  out->type = 0;
  out->reserved = 0;
  out->i = 0;
  out->f = 0;
  out->s = "";
  out->n = 0;
}

void set_string(CulpritJitValue* out, std::string_view s) {
  set_null(out);
  out->type = static_cast<int32_t>(Type::String);
  out->s = s.empty() ? "" : s.data();
  out->n = static_cast<int64_t>(s.size());
}

void set_int(CulpritJitValue* out, Type t, int64_t v) {
  set_null(out);
  out->type = static_cast<int32_t>(t);
  out->i = v;
}

// `v` must outlive the call (it is an event's, a symptom's or kept in the arena).
void set_value(CulpritJitValue* out, const Value& v) {
  switch (v.type) {
    case Type::Null: set_null(out); return;
    case Type::Bool: set_int(out, Type::Bool, v.b ? 1 : 0); return;
    case Type::Int:
    case Type::Time:
    case Type::Duration: set_int(out, v.type, v.i); return;
    case Type::Float:
      set_null(out);
      out->type = static_cast<int32_t>(Type::Float);
      out->f = v.f;
      return;
    case Type::String: set_string(out, v.s); return;
  }
  set_null(out);
}

// A value that only lives in this frame: its string goes to the arena.
void set_owned(CallContext& ctx, CulpritJitValue* out, const Value& v) {
  if (v.type == Type::String) return set_string(out, ctx.keep(v.s));
  set_value(out, v);
}

Value to_value(const CulpritJitValue& v) {
  switch (static_cast<Type>(v.type)) {
    case Type::Null: return Value::null();
    case Type::Bool: return Value::boolean(v.i != 0);
    case Type::Int: return Value::integer(v.i);
    case Type::Float: return Value::real(v.f);
    case Type::String: return Value::string(v.n > 0 ? std::string(v.s, static_cast<size_t>(v.n)) : std::string());
    case Type::Time: return Value::time(v.i);
    case Type::Duration: return Value::duration(v.i);
  }
  return Value::null();
}

std::string_view view(const char* s, int64_t n) { return n > 0 ? std::string_view(s, static_cast<size_t>(n)) : std::string_view(); }

// compare_values() (the interpreter's compare) on two non-null values of one
// expression, without building a Value: max/min compare every candidate.
int compare_jit_values(const CulpritJitValue& a, const CulpritJitValue& b) {
  constexpr int32_t kFloat = static_cast<int32_t>(Type::Float), kString = static_cast<int32_t>(Type::String),
                    kBool = static_cast<int32_t>(Type::Bool);
  if ((a.type == kFloat || b.type == kFloat) && a.type != kString) {
    double x = a.type == kFloat ? a.f : static_cast<double>(a.i), y = b.type == kFloat ? b.f : static_cast<double>(b.i);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.type == kString) {
    int c = view(a.s, a.n).compare(b.type == kString ? view(b.s, b.n) : std::string_view());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.type == kBool) {
    bool x = a.i != 0, y = b.type == kBool && b.i != 0;
    return x == y ? 0 : x ? 1 : -1;
  }
  return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
}

}  // namespace

// ------------------------------------------------------------- helpers
// Each mirrors the interpreter's code for the same operation
// (runtime/interpreter.cpp); tests/jit/differential_test.cpp holds them to it.

extern "C" {

void culprit_jit_event_field(void* c, int32_t slot, int32_t sel, CulpritJitValue* out) {
  Env& env = *context_of(c).env;
  const Item& it = env.slots[static_cast<size_t>(slot)];
  if (!it.event) return set_null(out);
  const Event& ev = *it.event;
  const ir::Catalog& cat = *env.catalog;
  switch (sel) {
    case ir::kEvKind: return set_string(out, cat.event_kinds[static_cast<size_t>(ev.kind)].name);
    case ir::kEvNode:
    case ir::kEvHost: return set_string(out, ev.host);
    case ir::kEvSource: return set_string(out, ev.where.source);
    case ir::kEvFile: return set_string(out, ev.where.file);
    case ir::kEvLine: return set_int(out, Type::Int, ev.where.line);
    case ir::kEvOffset: return set_int(out, Type::Int, ev.where.offset);
    case ir::kEvTs: return ev.where.ts ? set_int(out, Type::Time, *ev.where.ts) : set_null(out);
    case ir::kEvText: return set_string(out, ev.where.text);
    case ir::kEvOwnTs: return own_event_time(ev) ? set_int(out, Type::Time, *ev.where.ts) : set_null(out);
    case ir::kEvPlace: {
      // The helper's strings must outlive the call: keep the text in the context's arena.
      return set_string(out, context_of(c).keep(event_place(ev)));
    }
    case ir::kEvBoot: return ev.where.boot ? set_int(out, Type::Duration, *ev.where.boot) : set_null(out);
    default: break;
  }
  int32_t fs = cat.event_kinds[static_cast<size_t>(ev.kind)].slot(sel);
  if (fs < 0 || static_cast<size_t>(fs) >= ev.fields.size()) return set_null(out);
  set_value(out, ev.fields[static_cast<size_t>(fs)]);
}

void culprit_jit_symptom_field(void* c, int32_t slot, int32_t sel, CulpritJitValue* out) {
  Env& env = *context_of(c).env;
  const Item& it = env.slots[static_cast<size_t>(slot)];
  if (!it.symptom) return set_null(out);
  const Symptom& s = *it.symptom;
  switch (sel) {
    case ir::kSyId: return set_string(out, s.id);
    case ir::kSyKind: return set_string(out, s.kind_name);
    case ir::kSyNode: return set_string(out, s.node);
    case ir::kSyKey: return set_string(out, s.key);
    case ir::kSyFirst: return s.first ? set_int(out, Type::Time, *s.first) : set_null(out);
    case ir::kSyLast: return s.last ? set_int(out, Type::Time, *s.last) : set_null(out);
    case ir::kSyCount: return set_int(out, Type::Int, s.count);
    case ir::kSyPriority: return set_int(out, Type::Int, s.priority);
    case ir::kSySummary: return set_string(out, s.summary);
    case ir::kSyOwnFirst: return s.own_first ? set_int(out, Type::Time, *s.own_first) : set_null(out);
    case ir::kSyPlace: return s.place.empty() ? set_null(out) : set_string(out, s.place);
    case ir::kSyPlaceLine:
    case ir::kSyLine: return s.place.empty() ? set_null(out) : set_int(out, Type::Int, s.place_line);
    case ir::kSyPlaceBoot: return s.place_boot ? set_int(out, Type::Duration, *s.place_boot) : set_null(out);
    case ir::kSyFile: return s.place.empty() ? set_null(out) : set_string(out, s.file);
    case ir::kSySource: return s.place.empty() ? set_null(out) : set_string(out, s.source);
    default: break;
  }
  int32_t fs = env.catalog->symptom_kinds[static_cast<size_t>(s.kind)].slot(sel);
  if (fs < 0 || static_cast<size_t>(fs) >= s.fields.size()) return set_null(out);
  set_value(out, s.fields[static_cast<size_t>(fs)]);
}

CulpritJitFields culprit_jit_event_fields(void* c, int32_t slot) {
  const Event* ev = context_of(c).env->slots[static_cast<size_t>(slot)].event;
  if (!ev) return {nullptr, 0};
  return {ev->fields.data(), (static_cast<int64_t>(ev->kind) << 32) | static_cast<uint32_t>(ev->fields.size())};
}

CulpritJitFields culprit_jit_symptom_fields(void* c, int32_t slot) {
  const Symptom* s = context_of(c).env->slots[static_cast<size_t>(slot)].symptom;
  if (!s) return {nullptr, 0};
  return {s->fields.data(), (static_cast<int64_t>(s->kind) << 32) | static_cast<uint32_t>(s->fields.size())};
}

void culprit_jit_capture(void* c, int32_t index, CulpritJitValue* out) {
  Env& env = *context_of(c).env;
  if (!env.captures || index < 0 || static_cast<size_t>(index) >= env.captures->size()) return set_null(out);
  const auto& cap = (*env.captures)[static_cast<size_t>(index)];
  if (!cap) return set_null(out);
  set_string(out, *cap);
}

void culprit_jit_record(void* c, int32_t record, int32_t field, CulpritJitValue* out) {
  CallContext& ctx = context_of(c);
  const World* w = ctx.env->world;
  if (!w) return set_null(out);
  if (record != CULPRIT_JIT_TERMINAL && record != CULPRIT_JIT_OUTCOME)
    if (const Value* kept = w->workload_ref(field)) return set_value(out, *kept);  // lives as long as the World
  set_owned(ctx, out, record == CULPRIT_JIT_TERMINAL  ? w->terminal(field)
                      : record == CULPRIT_JIT_OUTCOME ? w->outcome(field)
                                                      : w->workload(field));
}

int32_t culprit_jit_covered(void* c, const char* source, int64_t source_len, const char* node, int64_t node_len) {
  const World* w = context_of(c).env->world;
  if (!w) return 0;
  return w->covered(std::string(view(source, source_len)), std::string(view(node, node_len))) ? 1 : 0;
}

int32_t culprit_jit_is_node(void* c, const char* name, int64_t name_len) {
  const World* w = context_of(c).env->world;
  return w && w->is_node(view(name, name_len)) ? 1 : 0;
}

void culprit_jit_rank_node(void* c, int64_t rank, CulpritJitValue* out) {
  const World* w = context_of(c).env->world;
  std::string_view node = w ? w->rank_node(rank) : std::string_view();
  if (node.empty()) return set_null(out);
  set_string(out, node);
}

void culprit_jit_host_node(void* c, const char* host, int64_t host_len, CulpritJitValue* out) {
  const World* w = context_of(c).env->world;
  std::string_view node = w ? w->host_node(view(host, host_len)) : std::string_view();
  if (node.empty()) return set_null(out);
  set_string(out, node);
}

void culprit_jit_gaps(void* c, const char* list, int64_t list_len, CulpritJitValue* out) {
  auto g = rank_gaps(view(list, list_len));
  if (!g) return set_null(out);
  if (g->empty()) return set_string(out, std::string_view());
  char* p = context_of(c).allocate(g->size());
  std::memcpy(p, g->data(), g->size());
  set_string(out, std::string_view(p, g->size()));
}

double culprit_jit_coverage(void* c, const char* source, int64_t source_len) {
  const World* w = context_of(c).env->world;
  return w ? w->coverage(std::string(view(source, source_len))) : 0.0;
}

int32_t culprit_jit_str_compare(const char* a, int64_t a_len, const char* b, int64_t b_len) {
  int r = view(a, a_len).compare(view(b, b_len));
  return r < 0 ? -1 : r > 0 ? 1 : 0;
}

int32_t culprit_jit_str_test(int32_t which, const char* a, int64_t a_len, const char* b, int64_t b_len) {
  std::string_view x = view(a, a_len), y = view(b, b_len);
  switch (which) {
    case CULPRIT_JIT_CONTAINS: return contains_text(x, y);
    case CULPRIT_JIT_STARTS_WITH: return x.substr(0, y.size()) == y;
    default: return x.size() >= y.size() && x.substr(x.size() - y.size()) == y;
  }
}

void culprit_jit_str_concat(void* c, const char* a, int64_t a_len, const char* b, int64_t b_len, CulpritJitValue* out) {
  const size_t n = static_cast<size_t>(std::max<int64_t>(a_len, 0)), m = static_cast<size_t>(std::max<int64_t>(b_len, 0));
  if (n + m == 0) return set_string(out, std::string_view());
  CallContext& ctx = context_of(c);
  // `a` + ... + `z` chains: when `a` is the arena's last string, `b` is
  // appended in place instead of copying `a` again.
  if (n && ctx.extend(a, n, m)) {
    if (m) std::memcpy(const_cast<char*>(a) + n, b, m);
    return set_string(out, std::string_view(a, n + m));
  }
  char* p = ctx.allocate(n + m);
  if (n) std::memcpy(p, a, n);
  if (m) std::memcpy(p + n, b, m);
  set_string(out, std::string_view(p, n + m));
}

void culprit_jit_str_case(void* c, int32_t upper, const char* a, int64_t a_len, CulpritJitValue* out) {
  std::string_view in = view(a, a_len);
  if (in.empty()) return set_string(out, in);
  char* p = context_of(c).allocate(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const auto ch = static_cast<unsigned char>(in[i]);
    p[i] = static_cast<char>(upper ? std::toupper(ch) : std::tolower(ch));
  }
  set_string(out, std::string_view(p, in.size()));
}

void culprit_jit_str_trim(const char* a, int64_t a_len, CulpritJitValue* out) {
  // A view into the argument, which outlives the call.
  set_string(out, trim(view(a, a_len)));
}

int32_t culprit_jit_parse_int(const char* a, int64_t a_len, int32_t base, int64_t* out) {
  auto r = parse_integer_text(view(a, a_len), base);
  if (!r) return 0;
  *out = *r;
  return 1;
}

int32_t culprit_jit_parse_time(const char* a, int64_t a_len, int64_t* out) {
  auto r = parse_time_text(view(a, a_len));
  if (!r) return 0;
  *out = *r;
  return 1;
}

int32_t culprit_jit_parse_float(const char* a, int64_t a_len, double* out) {
  auto r = parse_real_text(view(a, a_len));
  if (!r) return 0;
  *out = *r;
  return 1;
}

int32_t culprit_jit_duration(const CulpritJitValue* v, int64_t mul, int64_t* out) {
  // The interpreter's duration(n, unit), step for step.
  double n = 0;
  Type t = static_cast<Type>(v->type);
  if (t == Type::Int) n = static_cast<double>(v->i);
  else if (t == Type::Float) n = v->f;
  else if (t == Type::String) {
    auto f = parse_real_text(view(v->s, v->n));
    if (!f) return 0;
    n = *f;
  } else {
    return 0;
  }
  double ns = n * static_cast<double>(mul);
  if (!std::isfinite(ns) || std::fabs(ns) >= 9.2e18) return 0;
  if (t == Type::Int && v->i != 0 && std::llabs(v->i) < INT64_MAX / mul) {
    *out = v->i * mul;
    return 1;
  }
  *out = static_cast<int64_t>(std::llround(ns));
  return 1;
}

void culprit_jit_to_text(void* c, const CulpritJitValue* v, CulpritJitValue* out) {
  if (v->type == static_cast<int32_t>(Type::String)) return set_string(out, view(v->s, v->n));
  set_string(out, context_of(c).keep(value_to_text(to_value(*v))));
}

void culprit_jit_interpolate(void* c, const CulpritJitValue* parts, int32_t count, CulpritJitValue* out) {
  std::string s;
  for (int32_t i = 0; i < count; ++i) {
    const CulpritJitValue& p = parts[i];
    if (p.type == 0) s += '?';
    else if (p.type == static_cast<int32_t>(Type::String)) s.append(view(p.s, p.n));
    else s += value_to_text(to_value(p));
  }
  set_string(out, context_of(c).keep(std::move(s)));
}

int32_t culprit_jit_matches(void* c, int32_t regex, const char* a, int64_t a_len) {
  Env& env = *context_of(c).env;
  if (!env.regexes || regex < 0 || static_cast<size_t>(regex) >= env.regexes->size()) return 0;
  const auto& re = (*env.regexes)[static_cast<size_t>(regex)];
  std::string_view s = view(a, a_len);
  return re && RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *re) ? 1 : 0;
}

int32_t culprit_jit_query(void* c, int32_t op_code, int32_t query, CulpritJitFn value, CulpritJitValue* out) {
  CallContext& ctx = context_of(c);
  Env& env = *ctx.env;
  auto op = static_cast<ir::Op>(op_code);
  if (!env.world || !env.rule) {
    set_null(out);
    return CULPRIT_JIT_OK;
  }
  const ir::Query& q = env.rule->queries[static_cast<size_t>(query)];
  bool keep = false;
  if (const Value* kept = env.world->recall(q, env, &keep)) {
    // The kept value lives in the World until its inputs change, which no
    // expression can do; strings are copied anyway, they are rare here.
    if (kept->type == Type::String) set_string(out, ctx.keep(kept->s));
    else set_value(out, *kept);
    return CULPRIT_JIT_OK;
  }
  int64_t count = 0;
  DistinctNodes nodes;
  CulpritJitValue best;
  bool have_best = false;
  bool bailed = false;
  bool stop_at_first = op == ir::Op::QueryExists || op == ir::Op::QueryNone;
  bool valued = op == ir::Op::QueryMax || op == ir::Op::QueryMin;
  Item saved = env.slots[static_cast<size_t>(q.bind_slot)];
  auto visit = [&]() {
    if (!passes_filter(q, env)) return true;
    ++count;
    if (op == ir::Op::QueryNodes) nodes.add(env.slots[static_cast<size_t>(q.bind_slot)].node());
    if (valued) {
      // The value stays a CulpritJitValue: its string points into the item
      // or into this call's arena, both alive until the call returns, so
      // comparing candidates copies nothing.
      CulpritJitValue jv;
      if (!value || value(&ctx, &jv) != CULPRIT_JIT_OK) {
        bailed = true;
        return false;
      }
      if (jv.type != 0) {
        int cmp = have_best ? compare_jit_values(jv, best) : 0;
        if (!have_best || (op == ir::Op::QueryMax ? cmp > 0 : cmp < 0)) {
          best = jv;
          have_best = true;
        }
      }
    }
    return !stop_at_first;
  };
  // Compiled code reaches events only through this call: the budget check
  // here (and the count in World::candidates) bounds it like the interpreter.
  if (!env.world->out_of_budget()) env.world->candidates(q, env, visit);
  env.slots[static_cast<size_t>(q.bind_slot)] = saved;
  if (bailed) return CULPRIT_JIT_BAIL;
  switch (op) {
    case ir::Op::QueryExists: set_int(out, Type::Bool, count > 0); break;
    case ir::Op::QueryNone: set_int(out, Type::Bool, count == 0); break;
    case ir::Op::QueryCount: set_int(out, Type::Int, count); break;
    case ir::Op::QueryNodes: set_int(out, Type::Int, static_cast<int64_t>(nodes.count())); break;
    default:
      if (have_best) *out = best;
      else set_null(out);
  }
  if (keep) env.world->remember(q, env, to_value(*out));
  return CULPRIT_JIT_OK;
}

int32_t culprit_jit_group(void* c, int32_t op_code, CulpritJitFn value, CulpritJitValue* out) {
  CallContext& ctx = context_of(c);
  Env& env = *ctx.env;
  auto op = static_cast<ir::Op>(op_code);
  if (!env.group || env.group->empty()) {
    set_null(out);
    return CULPRIT_JIT_OK;
  }
  const auto& g = *env.group;
  switch (op) {
    case ir::Op::GroupCount: set_int(out, Type::Int, static_cast<int64_t>(g.size())); return CULPRIT_JIT_OK;
    case ir::Op::GroupFirstTs:
    case ir::Op::GroupLastTs: {
      std::optional<int64_t> best;
      for (const auto& it : g) {
        auto t = it.time();
        if (t && (!best || (op == ir::Op::GroupFirstTs ? *t < *best : *t > *best))) best = t;
      }
      if (best) set_int(out, Type::Time, *best);
      else set_null(out);
      return CULPRIT_JIT_OK;
    }
    case ir::Op::GroupDistinct:
    case ir::Op::GroupValues: {
      if (!value) return CULPRIT_JIT_BAIL;
      Item saved = env.slots[0];
      std::vector<Value> vals;
      for (const auto& it : g) {
        env.slots[0] = it;
        CulpritJitValue jv;
        if (value(&ctx, &jv) != CULPRIT_JIT_OK) {
          env.slots[0] = saved;
          return CULPRIT_JIT_BAIL;
        }
        Value v = to_value(jv);
        if (!v.is_null()) vals.push_back(std::move(v));
      }
      env.slots[0] = saved;
      std::sort(vals.begin(), vals.end(), value_less);
      vals.erase(std::unique(vals.begin(), vals.end(), values_equal), vals.end());
      if (op == ir::Op::GroupDistinct) {
        set_int(out, Type::Int, static_cast<int64_t>(vals.size()));
        return CULPRIT_JIT_OK;
      }
      std::string s;
      for (const auto& v : vals) s += (s.empty() ? "" : ",") + value_to_text(v);
      set_string(out, ctx.keep(std::move(s)));
      return CULPRIT_JIT_OK;
    }
    default: set_null(out); return CULPRIT_JIT_OK;
  }
}

}  // extern "C"

namespace {

const std::vector<jit::Helper>& helpers() {
  static const std::vector<jit::Helper> list = {
      {"culprit_jit_event_field", reinterpret_cast<void*>(&culprit_jit_event_field)},
      {"culprit_jit_symptom_field", reinterpret_cast<void*>(&culprit_jit_symptom_field)},
      {"culprit_jit_event_fields", reinterpret_cast<void*>(&culprit_jit_event_fields)},
      {"culprit_jit_symptom_fields", reinterpret_cast<void*>(&culprit_jit_symptom_fields)},
      {"culprit_jit_capture", reinterpret_cast<void*>(&culprit_jit_capture)},
      {"culprit_jit_record", reinterpret_cast<void*>(&culprit_jit_record)},
      {"culprit_jit_covered", reinterpret_cast<void*>(&culprit_jit_covered)},
      {"culprit_jit_is_node", reinterpret_cast<void*>(&culprit_jit_is_node)},
      {"culprit_jit_coverage", reinterpret_cast<void*>(&culprit_jit_coverage)},
      {"culprit_jit_str_compare", reinterpret_cast<void*>(&culprit_jit_str_compare)},
      {"culprit_jit_str_test", reinterpret_cast<void*>(&culprit_jit_str_test)},
      {"culprit_jit_str_concat", reinterpret_cast<void*>(&culprit_jit_str_concat)},
      {"culprit_jit_str_case", reinterpret_cast<void*>(&culprit_jit_str_case)},
      {"culprit_jit_str_trim", reinterpret_cast<void*>(&culprit_jit_str_trim)},
      {"culprit_jit_rank_node", reinterpret_cast<void*>(&culprit_jit_rank_node)},
      {"culprit_jit_gaps", reinterpret_cast<void*>(&culprit_jit_gaps)},
      {"culprit_jit_host_node", reinterpret_cast<void*>(&culprit_jit_host_node)},
      {"culprit_jit_parse_int", reinterpret_cast<void*>(&culprit_jit_parse_int)},
      {"culprit_jit_parse_float", reinterpret_cast<void*>(&culprit_jit_parse_float)},
      {"culprit_jit_parse_time", reinterpret_cast<void*>(&culprit_jit_parse_time)},
      {"culprit_jit_duration", reinterpret_cast<void*>(&culprit_jit_duration)},
      {"culprit_jit_to_text", reinterpret_cast<void*>(&culprit_jit_to_text)},
      {"culprit_jit_interpolate", reinterpret_cast<void*>(&culprit_jit_interpolate)},
      {"culprit_jit_matches", reinterpret_cast<void*>(&culprit_jit_matches)},
      {"culprit_jit_query", reinterpret_cast<void*>(&culprit_jit_query)},
      {"culprit_jit_group", reinterpret_cast<void*>(&culprit_jit_group)},
  };
  return list;
}

// Expression -> native function: an open-addressing table keyed by the
// expression's address, built once and read-only afterwards (so lock-free).
// Key and function share a slot so a lookup touches one cache line.
class FunctionTable {
 public:
  void build(const std::vector<std::pair<const ir::Expr*, CulpritJitFn>>& entries) {
    size_t cap = 16;
    while (cap < entries.size() + entries.size() / 2 + 1) cap *= 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const auto& [e, fn] : entries) {
      size_t i = index(e);
      while (slots_[i].key && slots_[i].key != e) i = (i + 1) & mask_;
      slots_[i] = Slot{e, fn};
    }
  }
  CulpritJitFn find(const ir::Expr* e) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = index(e);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == e) return s.fn;
      if (!s.key) return nullptr;
    }
  }

 private:
  struct Slot {
    const ir::Expr* key = nullptr;
    CulpritJitFn fn = nullptr;
  };
  size_t index(const ir::Expr* e) const {
    // Fibonacci hashing of the address: the high bits of the product.
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(e) * 0x9E3779B97F4A7C15ull) >> 40) & mask_;
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

// Whether Value starts with its type byte followed by its bool.
const bool kTypeThenBool = [] {
  Value v;
  const auto* base = reinterpret_cast<const char*>(&v);
  return reinterpret_cast<const char*>(&v.type) == base && reinterpret_cast<const char*>(&v.b) == base + 1;
}();

class JitCode final : public NativeCode {
 public:
  JitCode(const ir::Catalog& catalog, std::shared_ptr<const jit::CompiledCatalog> code) : code_(std::move(code)) {
    auto exprs = jit::top_level_expressions(catalog);
    std::vector<std::pair<const ir::Expr*, CulpritJitFn>> entries;
    for (size_t i = 0; i < exprs.size(); ++i)
      if (CulpritJitFn fn = code_->function(i)) entries.emplace_back(exprs[i], fn);
    table_.build(entries);
  }

  bool run(const ir::Expr& e, Env& env, Value& out) const override {
    CulpritJitFn fn = table_.find(&e);
    if (!fn) return false;
    CallContext ctx(&env);
    CulpritJitValue r;
    // A bail hands the expression to the interpreter, which redoes its
    // queries: what this attempt spent of the budget is given back first
    // (World::begin_attempt), so both engines count the same steps.
    const World* world = env.world;
    World::Attempt attempt{};
    if (world) attempt = world->begin_attempt();
    const bool bailed = fn(&ctx, &r) != CULPRIT_JIT_OK;
    if (world) world->end_attempt(attempt, bailed);
    if (bailed) return false;
    // Only the payload of the result's type is meaningful; the others are
    // reset so that `out` reads exactly like the interpreter's Value.
    // `type` and `b` are adjacent bytes that the caller's Value move reads
    // as one 16-bit word; storing them as two bytes would stall that load
    // (a failed store-to-load forward costs more than the whole call), so
    // they are stored together where the layout allows.
    bool b = r.type == static_cast<int32_t>(Type::Bool) && r.i != 0;
    if (kTypeThenBool) {
      uint16_t type_and_bool = static_cast<uint16_t>(static_cast<uint8_t>(r.type) | (b ? 0x100 : 0));
      std::memcpy(static_cast<void*>(&out), &type_and_bool, 2);
    } else {
      out.type = static_cast<Type>(r.type);
      out.b = b;
    }
    // Generated code writes the tag and that type's payload member only.
    const bool int_like = r.type == static_cast<int32_t>(Type::Int) || r.type == static_cast<int32_t>(Type::Time) ||
                          r.type == static_cast<int32_t>(Type::Duration);
    out.i = int_like ? r.i : 0;
    out.f = r.type == static_cast<int32_t>(Type::Float) ? r.f : 0.0;
    if (r.type == static_cast<int32_t>(Type::String)) out.s.assign(r.s, static_cast<size_t>(r.n));
    else if (!out.s.empty()) out.s.clear();
    return true;
  }

  const jit::Stats& stats() const { return code_->stats(); }

 private:
  std::shared_ptr<const jit::CompiledCatalog> code_;
  FunctionTable table_;
};

// Where this build's culprit::Value keeps its parts, measured on live
// objects (std::string's internals are found by looking for its data pointer
// and its size among the words of a long and of a short string). If anything
// is not as expected, fields are read through helpers instead.
jit::ValueLayout measure_value_layout() {
  jit::ValueLayout l;
  static_assert(sizeof(Type) == 1 && sizeof(bool) == 1, "type and bool are read as bytes");
  std::string long_text;
  long_text.reserve(100);  // capacity != size, so the two cannot be confused
  long_text.assign(61, 'x');
  Value probe[2] = {Value::string(std::move(long_text)), Value::string("ab")};
  int32_t data_at = -1, size_at = -1;
  for (int k = 0; k < 2; ++k) {
    const auto* s = reinterpret_cast<const unsigned char*>(&probe[k].s);
    int32_t found_data = -1, found_size = -1, hits = 0;
    for (size_t off = 0; off + 8 <= sizeof(std::string); off += 8) {
      uint64_t word = 0;
      std::memcpy(&word, s + off, 8);
      if (word == reinterpret_cast<uintptr_t>(probe[k].s.data())) found_data = static_cast<int32_t>(off), ++hits;
      if (word == probe[k].s.size()) found_size = static_cast<int32_t>(off), ++hits;
    }
    if (hits != 2 || (k == 1 && (found_data != data_at || found_size != size_at))) return l;
    data_at = found_data;
    size_at = found_size;
  }
  const auto* base = reinterpret_cast<const char*>(&probe[0]);
  auto at = [&](const void* p) { return static_cast<int32_t>(reinterpret_cast<const char*>(p) - base); };
  l.size = static_cast<int32_t>(sizeof(Value));
  l.type = at(&probe[0].type);
  l.boolean = at(&probe[0].b);
  l.integer = at(&probe[0].i);
  l.real = at(&probe[0].f);
  l.string_data = at(&probe[0].s) + data_at;
  l.string_size = at(&probe[0].s) + size_at;
  l.usable = true;
  return l;
}

}  // namespace

std::string resolved_cache_dir(const JitOptions& options) {
  if (!options.use_cache) return "";
  return options.cache_dir.empty() ? cache::default_directory() : options.cache_dir;
}

NativeCodeFactory jit_factory(const JitOptions& options) {
  return [options](const ir::Catalog& catalog, std::string& why) -> std::shared_ptr<const NativeCode> {
    try {
      jit::Options o;
      o.cache_dir = resolved_cache_dir(options);
      o.opt_level = options.opt_level;
      o.codegen_level = options.codegen_level;
      static const jit::ValueLayout layout = measure_value_layout();
      if (options.fields_in_place) o.layout = layout;
      auto code = jit::compile(catalog, helpers(), o, why);
      if (!code) return nullptr;
      return std::make_shared<JitCode>(catalog, std::move(code));
    } catch (const std::exception& e) {
      why = std::string("JIT failed: ") + e.what();
      return nullptr;
    }
  };
}

bool jit_available(std::string& why) { return jit::native_target_ready(&why); }

const jit::Stats* native_stats(const NativeCode* code) {
  auto* j = dynamic_cast<const JitCode*>(code);
  return j ? &j->stats() : nullptr;
}

}  // namespace culprit
