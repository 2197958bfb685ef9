#include "compiler/catalog_image.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "base/limits.h"

namespace culprit {

namespace {

// A new field in one of these structs must be written and read below. The
// sizes catch the struct growing without the image following it (on the
// LP64 platforms this builds on); bump kFormat whenever the layout changes.
static_assert(sizeof(ir::Expr) == 120, "ir::Expr changed: update catalog_image.cpp and kFormat");
static_assert(sizeof(ir::Query) == 208, "ir::Query changed: update catalog_image.cpp and kFormat");
static_assert(sizeof(ir::Rule) == 448, "ir::Rule changed: update catalog_image.cpp and kFormat");
static_assert(sizeof(ir::Action) == 1288, "ir::Action changed: update catalog_image.cpp and kFormat");
static_assert(sizeof(ir::Extractor) == 280, "ir::Extractor changed: update catalog_image.cpp and kFormat");
static_assert(sizeof(ir::Scenario) == 312, "ir::Scenario changed: update catalog_image.cpp and kFormat");
static_assert(sizeof(ir::Catalog) == 344, "ir::Catalog changed: update catalog_image.cpp and kFormat");
static_assert(sizeof(ir::KindSchema) == 80 && sizeof(ir::FieldDef) == 40 && sizeof(ir::FieldAssign) == 128,
              "a kind schema changed: update catalog_image.cpp and kFormat");
static_assert(sizeof(ir::LineTest) == 120 && sizeof(ir::ScenarioExpect) == 152 && sizeof(ir::ScenarioMetric) == 144 &&
                  sizeof(ir::ScenarioLog) == 96 && sizeof(ir::RegexDef) == 40 && sizeof(ir::CatalogPartInfo) == 152 &&
                  sizeof(Value) == 56 && sizeof(SourceRange) == 24,
              "a part of the IR changed: update catalog_image.cpp and kFormat");

constexpr uint32_t kFormat = 4;  // 2: ir::Extractor::keep_last; 3: ir::Action::generic; 4: ir::Scenario::ranks
constexpr char kMagic[8] = {'c', 'u', 'l', 'p', 'c', 'a', 't', '\n'};

class Writer {
 public:
  explicit Writer(const ir::Catalog& c) {
    for (size_t i = 0; i < c.sources.size(); ++i) file_index_[c.sources[i].get()] = static_cast<uint32_t>(i);
  }
  std::string out;
  bool complete = true;  // false: a SourceRange points outside catalog.sources

  void u8(uint8_t v) { out += static_cast<char>(v); }
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void i32(int32_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void flag(bool v) { u8(v ? 1 : 0); }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out.append(s);
  }
  void strs(const std::vector<std::string>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (const auto& s : v) str(s);
  }
  void ints(const std::vector<int32_t>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (int32_t x : v) i32(x);
  }
  void range(const SourceRange& r) {
    // 0 = no file; k + 1 = catalog.sources[k].
    auto it = r.file ? file_index_.find(r.file) : file_index_.end();
    if (r.file && it == file_index_.end()) complete = false;
    u32(it == file_index_.end() ? 0 : it->second + 1);
    u32(r.line);
    u32(r.col);
    u32(r.end_line);
    u32(r.end_col);
  }
  void value(const Value& v) {
    u8(static_cast<uint8_t>(v.type));
    flag(v.b);
    i64(v.i);
    f64(v.f);
    str(v.s);
  }
  void expr(const ir::Expr& e) {
    u8(static_cast<uint8_t>(e.op));
    u8(static_cast<uint8_t>(e.type));
    i32(e.a);
    i32(e.b);
    value(e.constant);
    range(e.where);
    u32(static_cast<uint32_t>(e.kids.size()));
    for (const auto& k : e.kids) expr(k);
  }
  void opt_expr(const std::optional<ir::Expr>& e) {
    flag(e.has_value());
    if (e) expr(*e);
  }
  void query(const ir::Query& q) {
    flag(q.symptom);
    ints(q.kinds);
    u8(static_cast<uint8_t>(q.relation));
    i32(q.bind_slot);
    i32(q.relation_slot);
    opt_expr(q.filter);
    flag(q.has_within);
    i64(q.within_ns);
    u8(static_cast<uint8_t>(q.direction));
    i32(q.anchor_slot);
    flag(q.anchor_is_symptom);
  }
  void kind(const ir::KindSchema& k) {
    str(k.name);
    u32(static_cast<uint32_t>(k.fields.size()));
    for (const auto& f : k.fields) {
      str(f.name);
      i32(f.name_id);
      u8(static_cast<uint8_t>(f.type));
    }
    ints(k.slot_of_name);
  }
  void assigns(const std::vector<ir::FieldAssign>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (const auto& a : v) {
      i32(a.slot);
      expr(a.value);
    }
  }
  void opt_i64(const std::optional<int64_t>& v) {
    flag(v.has_value());
    i64(v.value_or(0));
  }

 private:
  void raw(const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
  std::map<const SourceFile*, uint32_t> file_index_;
};

class Reader {
 public:
  Reader(std::string_view in, const std::vector<std::shared_ptr<const SourceFile>>& files) : in_(in), files_(files) {}

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool at_end() const { return pos_ == in_.size(); }
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }

  uint8_t u8() {
    uint8_t v = 0;
    raw(&v, 1);
    return v;
  }
  uint32_t u32() {
    uint32_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  int32_t i32() {
    int32_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  int64_t i64() {
    int64_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  double f64() {
    double v = 0;
    raw(&v, sizeof v);
    return v;
  }
  bool flag() {
    uint8_t v = u8();
    if (v > 1) fail("a flag is neither 0 nor 1");
    return v == 1;
  }
  // A count of items that each take at least `min_bytes`: checked against
  // what is left, so a corrupt count cannot make a huge allocation.
  uint32_t count(size_t min_bytes = 1) {
    uint32_t n = u32();
    if (ok() && static_cast<uint64_t>(n) * min_bytes > in_.size() - pos_) {
      fail("a count runs past the end of the image");
      return 0;
    }
    return ok() ? n : 0;
  }
  std::string str() {
    uint32_t n = count();
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  std::vector<std::string> strs() {
    std::vector<std::string> v(count(4));
    for (auto& s : v) s = str();
    return v;
  }
  std::vector<int32_t> ints() {
    std::vector<int32_t> v(count(4));
    for (auto& x : v) x = i32();
    return v;
  }
  template <typename E>
  E enumerator(uint8_t limit, const char* what) {
    uint8_t v = u8();
    if (v > limit) fail(fmt::format("{} {} is out of range", what, v));
    return static_cast<E>(v);
  }
  SourceRange range() {
    SourceRange r;
    uint32_t f = u32();
    if (f > files_.size()) fail("a source position names a file the catalog does not have");
    else if (f > 0) r.file = files_[f - 1].get();
    r.line = u32();
    r.col = u32();
    r.end_line = u32();
    r.end_col = u32();
    return r;
  }
  Value value() {
    Value v;
    v.type = enumerator<Type>(static_cast<uint8_t>(Type::Duration), "a value type");
    v.b = flag();
    v.i = i64();
    v.f = f64();
    v.s = str();
    return v;
  }
  void expr(ir::Expr& e, size_t depth = 0) {
    if (depth > limits::kExprDepth * 2) {
      fail("expressions nest deeper than the compiler allows");
      return;
    }
    e.op = enumerator<ir::Op>(static_cast<uint8_t>(ir::Op::Interpolate), "an operator");
    e.type = enumerator<Type>(static_cast<uint8_t>(Type::Duration), "a type");
    e.a = i32();
    e.b = i32();
    e.constant = value();
    e.where = range();
    e.kids.resize(count(8));
    for (auto& k : e.kids) {
      if (!ok()) return;
      expr(k, depth + 1);
    }
  }
  std::optional<ir::Expr> opt_expr() {
    if (!flag()) return std::nullopt;
    ir::Expr e;
    expr(e);
    return e;
  }
  ir::Query query() {
    ir::Query q;
    q.symptom = flag();
    q.kinds = ints();
    q.relation = enumerator<ir::NodeRelation>(static_cast<uint8_t>(ir::NodeRelation::Other), "a node relation");
    q.bind_slot = i32();
    q.relation_slot = i32();
    q.filter = opt_expr();
    q.has_within = flag();
    q.within_ns = i64();
    q.direction = enumerator<ir::WithinDirection>(static_cast<uint8_t>(ir::WithinDirection::Around), "a direction");
    q.anchor_slot = i32();
    q.anchor_is_symptom = flag();
    return q;
  }
  ir::KindSchema kind() {
    ir::KindSchema k;
    k.name = str();
    k.fields.resize(count(9));
    for (auto& f : k.fields) {
      f.name = str();
      f.name_id = i32();
      f.type = enumerator<Type>(static_cast<uint8_t>(Type::Duration), "a field type");
    }
    k.slot_of_name = ints();
    return k;
  }
  std::vector<ir::FieldAssign> assigns() {
    std::vector<ir::FieldAssign> v(count(8));
    for (auto& a : v) {
      a.slot = i32();
      expr(a.value);
    }
    return v;
  }
  std::optional<int64_t> opt_i64() {
    bool has = flag();
    int64_t v = i64();
    return has ? std::optional<int64_t>(v) : std::nullopt;
  }

 private:
  void raw(void* p, size_t n) {
    if (!ok()) return;
    if (n > in_.size() - pos_) {
      fail("the image is truncated");
      return;
    }
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  std::string_view in_;
  size_t pos_ = 0;
  const std::vector<std::shared_ptr<const SourceFile>>& files_;
  std::string error_;
};

void write_action(Writer& w, const ir::Action& a) {
  w.u8(static_cast<uint8_t>(a.kind));
  w.range(a.where);
  w.i32(a.kind_id);
  w.flag(a.on_job);
  w.flag(a.generic);
  for (const auto* e : {&a.node, &a.key, &a.priority, &a.summary, &a.at}) w.opt_expr(*e);
  w.assigns(a.fields);
  w.i32(a.target_slot);
  w.flag(a.query.has_value());
  if (a.query) w.query(*a.query);
  w.opt_expr(a.reason);
  w.opt_expr(a.value);
  w.str(a.status);
  w.str(a.domain);
  w.str(a.sub_domain);
}

ir::Action read_action(Reader& r) {
  ir::Action a;
  a.kind = r.enumerator<ir::ActionKind>(static_cast<uint8_t>(ir::ActionKind::SetOutcome), "an action");
  a.where = r.range();
  a.kind_id = r.i32();
  a.on_job = r.flag();
  a.generic = r.flag();
  for (auto* e : {&a.node, &a.key, &a.priority, &a.summary, &a.at}) *e = r.opt_expr();
  a.fields = r.assigns();
  a.target_slot = r.i32();
  if (r.flag()) a.query = r.query();
  a.reason = r.opt_expr();
  a.value = r.opt_expr();
  a.status = r.str();
  a.domain = r.str();
  a.sub_domain = r.str();
  return a;
}

void write_rule(Writer& w, const ir::Rule& r) {
  w.str(r.name);
  w.u8(static_cast<uint8_t>(r.stage));
  w.range(r.where);
  w.i32(r.index);
  w.flag(r.for_query.has_value());
  if (r.for_query) w.query(*r.for_query);
  w.u32(static_cast<uint32_t>(r.wheres.size()));
  for (const auto& e : r.wheres) w.expr(e);
  w.flag(r.grouped);
  w.u32(static_cast<uint32_t>(r.group_keys.size()));
  for (const auto& e : r.group_keys) w.expr(e);
  w.i64(r.group_within_ns);
  w.u32(static_cast<uint32_t>(r.actions.size()));
  for (const auto& a : r.actions) write_action(w, a);
  w.u32(static_cast<uint32_t>(r.queries.size()));
  for (const auto& q : r.queries) w.query(q);
  w.i32(r.slot_count);
  w.u32(static_cast<uint32_t>(r.slot_is_symptom.size()));
  for (bool b : r.slot_is_symptom) w.flag(b);
}

ir::Rule read_rule(Reader& r) {
  ir::Rule x;
  x.name = r.str();
  x.stage = r.enumerator<ir::Stage>(static_cast<uint8_t>(ir::Stage::PostOutcome), "a stage");
  x.where = r.range();
  x.index = r.i32();
  if (r.flag()) x.for_query = r.query();
  x.wheres.resize(r.count(8));
  for (auto& e : x.wheres) r.expr(e);
  x.grouped = r.flag();
  x.group_keys.resize(r.count(8));
  for (auto& e : x.group_keys) r.expr(e);
  x.group_within_ns = r.i64();
  x.actions.resize(r.count(8));
  for (auto& a : x.actions) a = read_action(r);
  x.queries.resize(r.count(8));
  for (auto& q : x.queries) q = r.query();
  x.slot_count = r.i32();
  x.slot_is_symptom.resize(r.count(1));
  for (size_t i = 0; i < x.slot_is_symptom.size(); ++i) x.slot_is_symptom[i] = r.flag();
  return x;
}

void write_extractor(Writer& w, const ir::Extractor& x) {
  w.str(x.name);
  w.range(x.where);
  w.strs(x.sources);
  w.opt_i64(x.keep_before_ns);
  w.opt_i64(x.keep_after_ns);
  w.opt_i64(x.keep_last);
  w.str(x.pattern);
  w.str(x.re2_pattern);
  w.flag(x.caseless);
  w.flag(x.dotall);
  w.strs(x.capture_names);
  w.i32(x.kind);
  w.assigns(x.fields);
  w.u32(static_cast<uint32_t>(x.tests.size()));
  for (const auto& t : x.tests) {
    w.str(t.title);
    w.range(t.where);
    w.str(t.line);
    w.flag(t.expect_none);
    w.u32(static_cast<uint32_t>(t.expected.size()));
    for (const auto& [slot, v] : t.expected) {
      w.i32(slot);
      w.value(v);
    }
  }
}

ir::Extractor read_extractor(Reader& r) {
  ir::Extractor x;
  x.name = r.str();
  x.where = r.range();
  x.sources = r.strs();
  x.keep_before_ns = r.opt_i64();
  x.keep_after_ns = r.opt_i64();
  x.keep_last = r.opt_i64();
  x.pattern = r.str();
  x.re2_pattern = r.str();
  x.caseless = r.flag();
  x.dotall = r.flag();
  x.capture_names = r.strs();
  x.kind = r.i32();
  x.fields = r.assigns();
  x.tests.resize(r.count(8));
  for (auto& t : x.tests) {
    t.title = r.str();
    t.where = r.range();
    t.line = r.str();
    t.expect_none = r.flag();
    t.expected.resize(r.count(8));
    for (auto& [slot, v] : t.expected) {
      slot = r.i32();
      v = r.value();
    }
  }
  return x;
}

void write_scenario(Writer& w, const ir::Scenario& s) {
  w.str(s.title);
  w.range(s.where);
  w.strs(s.nodes);
  w.str(s.workload_id);
  w.str(s.scheduler);
  w.str(s.terminal_state);
  w.i64(s.terminal_exit);
  w.opt_i64(s.window_start);
  w.opt_i64(s.window_end);
  w.u32(static_cast<uint32_t>(s.logs.size()));
  for (const auto& l : s.logs) {
    w.str(l.host);
    w.str(l.source);
    w.str(l.text);
  }
  w.u32(static_cast<uint32_t>(s.metrics.size()));
  for (const auto& m : s.metrics) {
    w.str(m.host);
    w.str(m.source);
    w.str(m.name);
    w.str(m.labels);
    w.f64(m.value);
    w.i64(m.ts);
  }
  w.u32(static_cast<uint32_t>(s.expects.size()));
  for (const auto& e : s.expects) {
    w.u8(static_cast<uint8_t>(e.kind));
    w.range(e.where);
    w.str(e.value);
    w.strs(e.culprits);
    w.str(e.kind_pattern);
    w.str(e.node);
  }
  w.u32(static_cast<uint32_t>(s.ranks.size()));
  for (const auto& [node, ranks] : s.ranks) {
    w.str(node);
    w.str(ranks);
  }
}

ir::Scenario read_scenario(Reader& r) {
  ir::Scenario s;
  s.title = r.str();
  s.where = r.range();
  s.nodes = r.strs();
  s.workload_id = r.str();
  s.scheduler = r.str();
  s.terminal_state = r.str();
  s.terminal_exit = r.i64();
  s.window_start = r.opt_i64();
  s.window_end = r.opt_i64();
  s.logs.resize(r.count(12));
  for (auto& l : s.logs) {
    l.host = r.str();
    l.source = r.str();
    l.text = r.str();
  }
  s.metrics.resize(r.count(32));
  for (auto& m : s.metrics) {
    m.host = r.str();
    m.source = r.str();
    m.name = r.str();
    m.labels = r.str();
    m.value = r.f64();
    m.ts = r.i64();
  }
  s.expects.resize(r.count(8));
  for (auto& e : s.expects) {
    e.kind = r.enumerator<ast::ScenarioExpectKind>(static_cast<uint8_t>(ast::ScenarioExpectKind::NoSymptom),
                                                    "an expectation");
    e.where = r.range();
    e.value = r.str();
    e.culprits = r.strs();
    e.kind_pattern = r.str();
    e.node = r.str();
  }
  s.ranks.resize(r.count(8));
  for (auto& [node, ranks] : s.ranks) {
    node = r.str();
    ranks = r.str();
  }
  return s;
}

}  // namespace

std::string encode_catalog(const ir::Catalog& c) {
  Writer w(c);
  w.out.append(kMagic, sizeof kMagic);
  w.u32(kFormat);
  w.u32(static_cast<uint32_t>(c.sources.size()));
  for (const auto& s : c.sources) w.str(s ? s->path : "");
  w.str(c.name);
  w.str(c.version);
  w.str(c.digest);
  w.strs(c.files);
  w.u32(static_cast<uint32_t>(c.parts.size()));
  for (const auto& p : c.parts) {
    w.str(p.name);
    w.str(p.version);
    w.str(p.root);
    w.str(p.digest);
    w.strs(p.files);
  }
  w.strs(c.field_names);
  for (const auto* kinds : {&c.event_kinds, &c.symptom_kinds}) {
    w.u32(static_cast<uint32_t>(kinds->size()));
    for (const auto& k : *kinds) w.kind(k);
  }
  w.i32(c.metric_kind);
  w.u32(static_cast<uint32_t>(c.extractors.size()));
  for (const auto& x : c.extractors) write_extractor(w, x);
  w.u32(static_cast<uint32_t>(c.rules.size()));
  for (const auto& r : c.rules) write_rule(w, r);
  w.u32(static_cast<uint32_t>(c.regexes.size()));
  for (const auto& r : c.regexes) {
    w.str(r.pattern);
    w.flag(r.caseless);
    w.flag(r.dotall);
  }
  w.u32(static_cast<uint32_t>(c.scenarios.size()));
  for (const auto& s : c.scenarios) write_scenario(w, s);
  if (!w.complete) return "";
  return std::move(w.out);
}

bool decode_catalog(std::string_view image, std::vector<std::shared_ptr<const SourceFile>> sources, ir::Catalog& out,
                    std::string& why) {
  if (image.size() < sizeof kMagic + 4 || std::memcmp(image.data(), kMagic, sizeof kMagic) != 0) {
    why = "not a catalog image";
    return false;
  }
  Reader r(image.substr(sizeof kMagic), sources);
  if (uint32_t format = r.u32(); format != kFormat) {
    why = fmt::format("catalog image format {} (this build reads {})", format, kFormat);
    return false;
  }
  uint32_t files = r.u32();
  if (files != sources.size()) {
    why = fmt::format("the image was made from {} files, not {}", files, sources.size());
    return false;
  }
  for (const auto& s : sources)
    if (std::string path = r.str(); r.ok() && (!s || path != s->path)) {
      why = fmt::format("the image was made from '{}', not '{}'", path, s ? s->path : "");
      return false;
    }
  ir::Catalog c;
  c.name = r.str();
  c.version = r.str();
  c.digest = r.str();
  c.files = r.strs();
  c.parts.resize(r.count(20));
  for (auto& p : c.parts) {
    p.name = r.str();
    p.version = r.str();
    p.root = r.str();
    p.digest = r.str();
    p.files = r.strs();
  }
  c.field_names = r.strs();
  for (auto* kinds : {&c.event_kinds, &c.symptom_kinds}) {
    kinds->resize(r.count(12));
    for (auto& k : *kinds) k = r.kind();
  }
  c.metric_kind = r.i32();
  c.extractors.resize(r.count(8));
  for (auto& x : c.extractors) x = read_extractor(r);
  c.rules.resize(r.count(8));
  for (auto& x : c.rules) x = read_rule(r);
  c.regexes.resize(r.count(6));
  for (auto& x : c.regexes) {
    x.pattern = r.str();
    x.caseless = r.flag();
    x.dotall = r.flag();
  }
  c.scenarios.resize(r.count(8));
  for (auto& s : c.scenarios) s = read_scenario(r);
  if (r.ok() && !r.at_end()) r.fail("bytes follow the end of the catalog");
  if (!r.ok()) {
    why = r.error();
    return false;
  }
  c.sources = std::move(sources);
  out = std::move(c);
  return true;
}

}  // namespace culprit
