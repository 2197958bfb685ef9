// Query plans and the engine's indexes (compiler/query_plan.h, runtime/engine.cpp).
//
// The planner: which conjuncts become index keys, what is memoized, which
// queries share an index. The engine: each index shape answers exactly what
// a walk over every candidate answers (the tests name the shape they break
// if an index filed or looked up a candidate wrongly), symptom indexes stay
// right while symptoms are created, merged earlier and demoted, memoized
// values follow their inputs. Last, a differential test: random catalogs of
// joins over random evidence, every verdict compared byte for byte between
// indexed and unindexed evaluation (DiagnoseOptions::use_indexes), on the
// interpreter and, for some seeds, on native code.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "compiler/query_plan.h"
#include "runtime/diagnose.h"
#include "runtime/native_code.h"
#include "runtime/verdict_json.h"
#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::compile_ok;
using culprit::testing::program_for;

namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 1767261600LL * kSec;  // 2026-01-01T10:00:00Z

// Three event kinds with string, int, bool and optional fields.
const std::string kExtractors = R"attr(
extractor A from app {
  match /A (?<code>\d+) dev=(?<dev>\w+)(?: peer=(?<peer>\w+))?/
  emit x.a { code: int(code), dev: dev, peer: peer, odd: int(code) % 2 == 1 }
  test { line "A 5 dev=d1 peer=p0" expect x.a { code: 5, dev: "d1", peer: "p0", odd: true } }
  test { line "nope" expect none }
}
extractor B from app {
  match /B (?<code>\d+) dev=(?<dev>\w+)/
  emit x.b { code: int(code), dev: dev, odd: int(code) % 2 == 1 }
  test { line "B 4 dev=d2" expect x.b { code: 4, dev: "d2", odd: false } }
  test { line "nope" expect none }
}
extractor C from kernel {
  match /C (?<what>\w+) n=(?<n>\d+)/
  emit x.c { what: what, n: int(n) }
  test { line "C w1 n=3" expect x.c { what: "w1", n: 3 } }
  test { line "nope" expect none }
}
)attr";

Observation line(const std::string& host, const std::string& source, std::optional<int64_t> ts, const std::string& text) {
  Observation o;
  o.host = host;
  o.source = source;
  o.ts = ts;
  o.text = text;
  return o;
}

WorkloadContext context(int nodes) {
  WorkloadContext c;
  c.workload_id = "job-7";
  c.scheduler = "slurm";
  c.start = kT0 - 3600 * kSec;
  c.end = kT0 + 3600 * kSec;
  for (int i = 1; i <= nodes; ++i) c.nodes.push_back("node-0" + std::to_string(i));
  c.terminal.state = "FAILED";
  c.terminal.exit_code = 1;
  return c;
}

Verdict run(const std::shared_ptr<const Program>& program, const WorkloadContext& ctx, const std::vector<Observation>& obs,
            bool use_indexes) {
  DiagnoseRequest req;
  req.context = ctx;
  req.observations = obs;
  DiagnoseOptions opt;
  opt.threads = 1;
  opt.use_indexes = use_indexes;
  Verdict v;
  std::string error;
  const bool ok = diagnose(program, req, opt, v, error);
  INFO(error);
  REQUIRE(ok);
  return v;
}

std::string verdict_text(const Verdict& v) { return verdict_to_json_text(v, true); }

// Runs both ways, requires the same verdict, returns the indexed one.
Verdict run_both(const std::shared_ptr<const Program>& program, const WorkloadContext& ctx, const std::vector<Observation>& obs) {
  Verdict indexed = run(program, ctx, obs, true);
  Verdict plain = run(program, ctx, obs, false);
  CHECK(verdict_text(indexed) == verdict_text(plain));
  return indexed;
}

const Symptom& symptom(const Verdict& v, const std::string& id) {
  for (const auto& s : v.symptoms)
    if (s.id == id) return s;
  std::string all;
  for (const auto& s : v.symptoms) all += s.id + " ";
  INFO("symptoms: " << all);
  FAIL("no symptom " << id);
  static Symptom none;
  return none;
}

Value field(const Symptom& s, const std::string& name) {
  for (size_t i = 0; i < s.field_names.size(); ++i)
    if (s.field_names[i] == name) return s.fields[i];
  FAIL("symptom " << s.id << " has no field " << name);
  return Value::null();
}

int64_t int_field(const Verdict& v, const std::string& id, const std::string& name) {
  Value f = field(symptom(v, id), name);
  REQUIRE(f.type == Type::Int);
  return f.i;
}

// The plan of the `index`-th query (in plan order) of rule `rule`.
const plan::QueryPlan& plan_of(const plan::CatalogPlans& plans, const std::string& rule, size_t index) {
  size_t seen = 0;
  for (const auto& p : plans.plans())
    if (p.rule->name == rule && seen++ == index) return p;
  FAIL("rule " << rule << " has no query " << index);
  return plans.plans().front();
}

std::string key_text(const plan::QueryPlan& p, const ir::Catalog& cat) {
  std::string out;
  for (const auto& k : p.keys)
    out += (out.empty() ? "" : "; ") + plan::expression_text(*k.candidate, cat) + " = " + plan::expression_text(*k.probe, cat);
  return out;
}

}  // namespace

// ------------------------------------------------------------------ planner

TEST_CASE("plans: equality conjuncts become keys, whichever side reads the candidate") {
  auto cat = compile_ok(kExtractors + R"attr(
rule J stage symptoms {
  for e: event x.a where e.code > 1
  symptom s.j {
    same_dev: count(o: event x.b on same node where o.dev == e.dev and o.code > 2),
    swapped: exists(o: event x.b where coalesce(e.peer, "") == o.dev),
    two: count(o: event x.a where o.dev == e.dev and o.odd == e.odd and o.code != 3),
    constant: count(o: event x.c where o.what == "w1"),
    float_eq: count(o: event x.b where float(o.code) == 2.0),
    self_only: count(o: event x.b where o.code == o.code + 0),
    disjunction: count(o: event x.b where o.dev == e.dev or o.code == 1),
    windowed: count(o: event x.b where o.dev == e.dev within 5s around e)
  }
}
)attr");
  auto plans = plan::plan_catalog(*cat);
  const auto& forq = plan_of(plans, "J", 0);
  CHECK(forq.role == "for");
  CHECK(forq.keys.empty());
  CHECK_FALSE(forq.by_node);
  const auto& same_dev = plan_of(plans, "J", 1);
  CHECK(same_dev.by_node);
  CHECK(key_text(same_dev, *cat) == "o.dev = e.dev");
  // Reads e through e.dev and e's node only: kept per (e.dev, node).
  CHECK(same_dev.memoized);
  REQUIRE(same_dev.params.size() == 1);
  CHECK(plan::expression_text(*same_dev.params[0], *cat) == "e.dev");
  CHECK(same_dev.param_node_slots.size() == 1);
  // Two reads of e.peer would be one parameter; e.dev and e.odd are two.
  CHECK(plan_of(plans, "J", 3).params.size() == 2);
  CHECK_FALSE(plan_of(plans, "J", 8).memoized);  // a `within` anchored on e: a new window for every e
  CHECK(key_text(plan_of(plans, "J", 2), *cat) == "o.dev = coalesce(e.peer, \"\")");
  CHECK(key_text(plan_of(plans, "J", 3), *cat) == "o.dev = e.dev; o.odd = e.odd");
  const auto& constant = plan_of(plans, "J", 4);
  CHECK(key_text(constant, *cat) == "o.what = \"w1\"");
  CHECK(constant.memoized);  // reads no binding from outside
  CHECK(constant.params.empty());
  CHECK(constant.param_node_slots.empty());
  CHECK(constant.event_inputs.size() == 1);
  CHECK(plan_of(plans, "J", 5).keys.empty());  // float equality is not decided by bytes
  CHECK(plan_of(plans, "J", 6).keys.empty());  // both sides read the candidate
  CHECK(plan_of(plans, "J", 7).keys.empty());  // not a conjunct
  CHECK(plan_of(plans, "J", 2).first_hit);
  CHECK_FALSE(plan_of(plans, "J", 1).first_hit);
}

TEST_CASE("plans: no memo for a query that orders against the outer binding; shared signatures share an index id") {
  auto cat = compile_ok(kExtractors + R"attr(
rule K stage symptoms {
  for e: event x.a
  symptom s.k {
    later: exists(o: event x.b on same node where o.dev == e.dev and o after e),
    bigger: exists(o: event x.b on same node where o.dev == e.dev and o.code > e.code),
    again: count(o: event x.b on same node where o.dev == e.dev),
    other: count(o: event x.c where o.what == e.dev)
  }
}
)attr");
  auto plans = plan::plan_catalog(*cat);
  // `o after e` reads e's file and line (and times): a tuple of its own for
  // every e, so a memo would only grow.
  const auto& later = plan_of(plans, "K", 1);
  CHECK(later.by_node);
  CHECK(key_text(later, *cat) == "o.dev = e.dev");
  CHECK_FALSE(later.memoized);
  CHECK(later.first_hit);
  // e.code is a value many events share: kept per (e.dev, e.code, node).
  const auto& bigger = plan_of(plans, "K", 2);
  CHECK(bigger.memoized);
  CHECK(bigger.params.size() == 2);
  // Same kinds, node grouping and candidate key: one index; x.c's is another.
  CHECK(later.index_id == bigger.index_id);
  CHECK(plan_of(plans, "K", 3).index_id == later.index_id);
  CHECK(plan_of(plans, "K", 4).index_id != later.index_id);
  CHECK(plan_of(plans, "K", 0).index_id != later.index_id);
  std::vector<bool> used(plans.index_count(), false);
  for (const auto& p : plans.plans()) {
    REQUIRE(p.index_id >= 0);
    REQUIRE(static_cast<size_t>(p.index_id) < plans.index_count());
    used[static_cast<size_t>(p.index_id)] = true;
    for (const auto& q : plans.plans()) CHECK((p.index_signature == q.index_signature) == (p.index_id == q.index_id));
  }
  CHECK(std::all_of(used.begin(), used.end(), [](bool u) { return u; }));
}

TEST_CASE("plans: --explain names what a memo keeps of a binding the order construct reads") {
  auto cat = compile_ok(kExtractors + R"attr(
rule M stage symptoms {
  for e: event x.a
  symptom s.m {
    n: count(o: event x.b where o.dev == e.dev and e after o)
  }
}
)attr");
  auto plans = plan::plan_catalog(*cat);
  const auto& p = plan_of(plans, "M", 1);
  CHECK_FALSE(p.memoized);  // e's file and line pin one event
  // `e after o` reads o (the candidate) and e: e's time, own time, file and
  // line, each written as just `e`; the renderings say which.
  std::vector<std::string> seen;
  std::function<void(const ir::Expr&)> walk = [&](const ir::Expr& x) {
    if ((x.op == ir::Op::EventField) && x.a == 0 && x.b < 0) seen.push_back(plan::expression_text(x, *cat));
    for (const auto& k : x.kids) walk(k);
  };
  walk(*p.query->filter);
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  std::string listed;
  for (const auto& x : seen) listed += x + "; ";
  INFO(listed);
  CHECK(seen == std::vector<std::string>{"file of e", "line of e", "own time of e", "time of e"});
}

TEST_CASE("plans: symptom keys use only fields that merging does not change; closed queries are memoized") {
  auto cat = compile_ok(kExtractors + R"attr(
rule S stage symptoms {
  for e: event x.a
  symptom s.a key e.dev { dev: e.dev }
}
rule T stage aggregate {
  for x: symptom s.a
  where count(t: symptom s.a where t.key == x.key) >= 1
    and count(t: symptom s.a where t.dev == x.dev) >= 1
    and count(t: symptom s.a where t.count == x.count) >= 1
    and x.priority == max(y: symptom s.*, y.priority)
    and exists(y: symptom s.a on same node where y.first == x.first)
  symptom s.t key x.id { n: 1 }
}
)attr");
  auto plans = plan::plan_catalog(*cat);
  CHECK(key_text(plan_of(plans, "T", 1), *cat) == "t.key = x.key");
  CHECK(key_text(plan_of(plans, "T", 2), *cat) == "t.dev = x.dev");
  CHECK(plan_of(plans, "T", 3).keys.empty());  // count changes as symptoms merge
  const auto& mx = plan_of(plans, "T", 4);
  CHECK(mx.memoized);
  CHECK(mx.symptom_inputs.size() == cat->symptom_kinds.size());  // s.* is every kind here
  const auto& first = plan_of(plans, "T", 5);
  CHECK(first.by_node);
  CHECK(first.keys.empty());  // first changes as symptoms merge
  // Queries of one shape share an index; a different key is another index.
  CHECK(plan_of(plans, "T", 1).index_signature != plan_of(plans, "T", 2).index_signature);
  CHECK(plan::describe(plan_of(plans, "T", 1), *cat).find("index (symptom: s.a, t.key = x.key)") == 0);
  CHECK(plan::describe(mx, *cat).find("computed once") != std::string::npos);
}

TEST_CASE("plans: a priority comparison with the candidate on either side becomes a priority range") {
  auto cat = compile_ok(kExtractors + R"attr(
rule S stage symptoms {
  for e: event x.a
  symptom s.a key e.dev priority e.code { dev: e.dev }
}
rule T stage final {
  for x: symptom s.a where x.priority >= 50
  demote z: symptom s.a where z.priority < x.priority because "lower"
  demote w: symptom s.a where x.priority > w.priority and w.dev != x.dev because "lower"
  demote v: symptom s.a where v.priority <= x.count because "count"
  demote u: symptom s.a where u.priority + 1 < x.priority because "not the field itself"
  demote t: symptom s.a where t.priority < x.priority within 1m around x because "within first"
}
)attr");
  auto plans = plan::plan_catalog(*cat);
  const auto& f = plan_of(plans, "T", 0);
  REQUIRE(f.priority_range);
  CHECK(f.priority_range->op == ir::Op::Ge);
  const auto& z = plan_of(plans, "T", 1);
  REQUIRE(z.priority_range);
  CHECK(z.priority_range->op == ir::Op::Lt);
  CHECK(plan::describe(z, *cat).find("priority < x.priority by binary search") != std::string::npos);
  const auto& w = plan_of(plans, "T", 2);  // x.priority > w.priority: w.priority < x.priority
  REQUIRE(w.priority_range);
  CHECK(w.priority_range->op == ir::Op::Lt);
  const auto& v = plan_of(plans, "T", 3);  // any Int probe that does not read the candidate
  REQUIRE(v.priority_range);
  CHECK(v.priority_range->op == ir::Op::Le);
  CHECK_FALSE(plan_of(plans, "T", 4).priority_range);  // not the bare field
  CHECK_FALSE(plan_of(plans, "T", 5).priority_range);  // `within` narrows instead
  // The probes are compiled with the keys.
  auto keys = plans.key_expressions();
  for (const auto* p : {&f, &z, &w, &v}) CHECK(std::find(keys.begin(), keys.end(), p->priority_range->probe) != keys.end());
  auto all = jit::top_level_expressions(*cat);
  for (const ir::Expr* k : keys) CHECK(std::find(all.begin(), all.end(), k) != all.end());
}

TEST_CASE("plans: the JIT compiles both sides of every key") {
  auto cat = compile_ok(kExtractors + R"attr(
rule K stage symptoms {
  for e: event x.a
  where exists(o: event x.b on same node where o.dev == e.dev)
  symptom s.k { n: 1 }
}
)attr");
  auto plans = plan::plan_catalog(*cat);
  auto keys = plans.key_expressions();
  REQUIRE(keys.size() == 2);
  auto all = jit::top_level_expressions(*cat);
  for (const ir::Expr* k : keys) CHECK(std::find(all.begin(), all.end(), k) != all.end());
}

// ------------------------------------------------------------ engine shapes

TEST_CASE("index (kind, node, key): only the bucket of the binding's node and key") {
  auto program = program_for(kExtractors + R"attr(
rule J stage symptoms {
  for e: event x.a
  symptom s.j key e.dev {
    same: count(o: event x.b on same node where o.dev == e.dev),
    any: count(o: event x.b where o.dev == e.dev),
    other: count(o: event x.b on other nodes where o.dev == e.dev),
    other_code: count(o: event x.b on other nodes where o.code == e.code),
    odd: count(o: event x.b on same node where o.odd == e.odd)
  }
}
)attr");
  auto v = run_both(program, context(3),
                    {
                        line("node-01", "app", kT0, "A 1 dev=d1"),
                        line("node-02", "app", kT0 + kSec, "A 4 dev=d2"),
                        line("node-01", "app", kT0 + 2 * kSec, "B 1 dev=d1"),
                        line("node-01", "app", kT0 + 3 * kSec, "B 2 dev=d1"),
                        line("node-01", "app", kT0 + 4 * kSec, "B 3 dev=d2"),
                        line("node-02", "app", kT0 + 5 * kSec, "B 4 dev=d1"),
                        line("node-03", "app", kT0 + 6 * kSec, "B 1 dev=d2"),
                        line("node-03", "app", kT0 + 7 * kSec, "B 4 dev=d2"),
                    });
  CHECK(int_field(v, "s.j@node-01#d1", "same") == 2);
  CHECK(int_field(v, "s.j@node-01#d1", "any") == 3);
  CHECK(int_field(v, "s.j@node-01#d1", "other") == 1);
  CHECK(int_field(v, "s.j@node-01#d1", "other_code") == 1);
  CHECK(int_field(v, "s.j@node-01#d1", "odd") == 2);  // codes 1 and 3 are odd like 1
  CHECK(int_field(v, "s.j@node-02#d2", "same") == 0);
  CHECK(int_field(v, "s.j@node-02#d2", "any") == 3);
  CHECK(int_field(v, "s.j@node-02#d2", "other") == 3);
  CHECK(int_field(v, "s.j@node-02#d2", "other_code") == 1);
  CHECK(int_field(v, "s.j@node-02#d2", "odd") == 1);
}

TEST_CASE("index keys: a null key matches nothing, on either side; coalesce makes it a value") {
  auto program = program_for(kExtractors + R"attr(
rule J stage symptoms {
  for e: event x.a
  symptom s.j key e.code {
    peer_eq: count(o: event x.a where o.peer == e.peer),
    peer_or_empty: count(o: event x.a where coalesce(o.peer, "") == coalesce(e.peer, ""))
  }
}
)attr");
  auto v = run_both(program, context(1),
                    {
                        line("node-01", "app", kT0, "A 1 dev=d1 peer=p1"),
                        line("node-01", "app", kT0 + kSec, "A 2 dev=d1"),
                        line("node-01", "app", kT0 + 2 * kSec, "A 3 dev=d1"),
                        line("node-01", "app", kT0 + 3 * kSec, "A 4 dev=d1 peer=p1"),
                    });
  CHECK(int_field(v, "s.j@node-01#1", "peer_eq") == 2);
  CHECK(int_field(v, "s.j@node-01#2", "peer_eq") == 0);  // null == null is false
  CHECK(int_field(v, "s.j@node-01#2", "peer_or_empty") == 2);
  CHECK(int_field(v, "s.j@node-01#4", "peer_or_empty") == 2);
}

TEST_CASE("infix index: contains(c, \"P\" + probe + \"S\") files a candidate under each delimited infix") {
  auto program = program_for(kExtractors + R"attr(
extractor D from app {
  match /D (?<list>\S+) n=(?<n>\d+)/
  emit x.d { list: list, n: int(n) }
  test { line "D ib0:p1<0> n=1" expect x.d { list: "ib0:p1<0>", n: 1 } }
  test { line "nope" expect none }
}
rule K stage symptoms {
  for e: event x.a where e.peer is not null
  symptom s.k key e.peer {
    n: count(d: event x.d where contains(d.list, ":" + e.peer + "<")),
    n2: count(d: event x.d where d.n > 1 and contains(d.list, "=" + e.peer + "=")),
    top: max(d: event x.d where contains(d.list, ":" + e.peer + "<"), d.n)
  }
}
)attr");
  const auto& plans = program->query_plans();
  const plan::QueryPlan& p = plan_of(plans, "K", 1);
  REQUIRE(p.keys.size() == 1);
  CHECK(p.keys[0].infix);
  CHECK(p.keys[0].prefix == ":");
  CHECK(p.keys[0].suffix == "<");
  CHECK(key_text(p, program->catalog()) == "d.list = e.peer");
  CHECK(plan::describe(p, program->catalog()).find("by infix") != std::string::npos);
  CHECK(plan_of(plans, "K", 2).keys.size() == 1);  // the infix key after the other conjunct's (none: d.n > 1 is no key)
  auto v = run_both(program, context(1),
                    {
                        line("node-01", "app", kT0, "A 1 dev=d1 peer=p1"),
                        line("node-01", "app", kT0 + kSec, "A 2 dev=d1 peer=p2"),
                        line("node-01", "app", kT0 + 2 * kSec, "A 3 dev=d1 peer=p12"),
                        line("node-01", "app", kT0 + 3 * kSec, "D ib0:p1<0> n=1"),
                        line("node-01", "app", kT0 + 4 * kSec, "D ib0:p1<0>,eth1:p1<1> n=2"),  // twice: counted once
                        line("node-01", "app", kT0 + 5 * kSec, "D x:p12<0> n=1"),             // not p1
                        line("node-01", "app", kT0 + 6 * kSec, "D a:b:p2<0> n=3"),            // overlapping prefixes
                        line("node-01", "app", kT0 + 7 * kSec, "D =p1=,:p2 n=2"),             // no suffix after p2
                    });
  CHECK(int_field(v, "s.k@node-01#p1", "n") == 2);
  CHECK(int_field(v, "s.k@node-01#p2", "n") == 1);
  CHECK(int_field(v, "s.k@node-01#p12", "n") == 1);
  CHECK(int_field(v, "s.k@node-01#p1", "n2") == 1);
  CHECK(int_field(v, "s.k@node-01#p2", "n2") == 0);
  CHECK(int_field(v, "s.k@node-01#p1", "top") == 2);
  CHECK(int_field(v, "s.k@node-01#p2", "top") == 3);
}

TEST_CASE("index with `within`: binary search inside the node's bucket keeps the window exact") {
  auto program = program_for(kExtractors + R"attr(
rule W stage symptoms {
  for e: event x.a
  symptom s.w key e.code {
    before: count(o: event x.b on same node where o.dev == e.dev within 10s before e),
    after: count(o: event x.b on same node where o.dev == e.dev within 10s after e),
    around: count(o: event x.b where o.dev == e.dev within 5s around e)
  }
}
)attr");
  auto v = run_both(program, context(2),
                    {
                        line("node-01", "app", kT0 + 100 * kSec, "A 1 dev=d1"),
                        line("node-01", "app", kT0 + 89 * kSec, "B 1 dev=d1"),   // 11 s before: out
                        line("node-01", "app", kT0 + 90 * kSec, "B 1 dev=d1"),   // 10 s before: in
                        line("node-01", "app", kT0 + 96 * kSec, "B 1 dev=d1"),
                        line("node-01", "app", kT0 + 96 * kSec, "B 1 dev=d2"),   // other key
                        line("node-02", "app", kT0 + 98 * kSec, "B 1 dev=d1"),   // other node
                        line("node-01", "app", kT0 + 100 * kSec, "B 1 dev=d1"),  // same instant: both
                        line("node-01", "app", kT0 + 110 * kSec, "B 1 dev=d1"),
                        line("node-01", "app", kT0 + 111 * kSec, "B 1 dev=d1"),
                        line("node-01", "app", std::nullopt, "B 1 dev=d1"),      // inherits 111 s
                    });
  CHECK(int_field(v, "s.w@node-01#1", "before") == 3);
  CHECK(int_field(v, "s.w@node-01#1", "after") == 2);
  CHECK(int_field(v, "s.w@node-01#1", "around") == 3);
}

TEST_CASE("a closed aggregate as the probe, memoized: h.at == min(...) finds the earliest") {
  auto program = program_for(kExtractors + R"attr(
rule M stage symptoms {
  for c: event x.c where c.n == min(k: event x.c, k.n)
  symptom s.m key c.what {
    firsts: count(o: event x.c where o.n == min(k: event x.c, k.n)),
    with_first_code: count(o: event x.a where o.code == max(k: event x.a where k.dev == "d1", k.code))
  }
}
)attr");
  auto v = run_both(program, context(2),
                    {
                        line("node-01", "kernel", kT0, "C w1 n=3"),
                        line("node-02", "kernel", kT0 + kSec, "C w2 n=1"),
                        line("node-01", "kernel", kT0 + 2 * kSec, "C w3 n=1"),
                        line("node-01", "kernel", kT0 + 3 * kSec, "C w4 n=2"),
                        line("node-01", "app", kT0, "A 7 dev=d1"),
                        line("node-02", "app", kT0, "A 7 dev=d2"),
                        line("node-02", "app", kT0, "A 9 dev=d2"),
                    });
  CHECK(v.symptoms.size() == 2);
  CHECK(int_field(v, "s.m@node-02#w2", "firsts") == 2);
  CHECK(int_field(v, "s.m@node-01#w3", "with_first_code") == 2);
}

TEST_CASE("symptom indexes follow creation: a rule counts the symptoms of its own kind made so far") {
  auto program = program_for(kExtractors + R"attr(
rule S stage symptoms {
  for c: event x.c
  symptom s.c key c.what {
    what: c.what,
    before_me_same_key: count(t: symptom s.c where t.key == c.what),
    before_me_same_what: count(t: symptom s.c on same node where t.what == c.what),
    all_so_far: count(t: symptom s.c)
  }
}
)attr");
  auto v = run_both(program, context(2),
                    {
                        line("node-01", "kernel", kT0, "C w1 n=1"),
                        line("node-02", "kernel", kT0 + kSec, "C w1 n=1"),
                        line("node-01", "kernel", kT0 + 2 * kSec, "C w2 n=1"),
                        line("node-02", "kernel", kT0 + 3 * kSec, "C w1 n=1"),
                    });
  // Fields are those of the first creation: what existed when it was made.
  CHECK(int_field(v, "s.c@node-01#w1", "before_me_same_key") == 0);
  CHECK(int_field(v, "s.c@node-02#w1", "before_me_same_key") == 1);
  CHECK(int_field(v, "s.c@node-02#w1", "before_me_same_what") == 0);
  CHECK(int_field(v, "s.c@node-01#w2", "all_so_far") == 2);
}

TEST_CASE("symptom indexes follow `first`: evidence merged earlier re-orders the bucket") {
  // Y symptoms are made in the order y1, y2; then Z merges evidence from
  // before y1 into y2. The `for x` over them must now start with y2, so y2
  // is the cause recorded on the demoted D.
  auto program = program_for(kExtractors + R"attr(
rule Y stage symptoms {
  for c: event x.c
  symptom s.y key c.what { what: c.what }
}
rule Z stage symptoms {
  for e: event x.b
  symptom s.y key "w2" { what: "w2" }
}
rule D stage symptoms {
  for e: event x.a
  symptom s.d { n: 1 }
}
rule Cause stage final {
  for x: symptom s.y on any node
  demote d: symptom s.d where exists(t: symptom s.y on same node where t.key == x.key) because "after {x.id}"
}
)attr");
  auto v = run_both(program, context(1),
                    {
                        line("node-01", "kernel", kT0 + 10 * kSec, "C w1 n=1"),
                        line("node-01", "kernel", kT0 + 20 * kSec, "C w2 n=1"),
                        line("node-01", "app", kT0 + 1 * kSec, "B 1 dev=d1"),
                        line("node-01", "app", kT0 + 30 * kSec, "A 1 dev=d1"),
                    });
  const Symptom& d = symptom(v, "s.d@node-01");
  REQUIRE(d.demoted_by);
  CHECK(d.demoted_by->cause == "s.y@node-01#w2");
}

TEST_CASE("state changes do not drop symptoms from an index: scrubbed ones are skipped, the rest stay") {
  auto program = program_for(kExtractors + R"attr(
rule S stage symptoms {
  for e: event x.a
  symptom s.a key e.dev { dev: e.dev }
}
rule Scrub stage scrub {
  for e: event x.b
  scrub a: symptom s.a where a.dev == e.dev because "b on {e.dev}"
}
rule Count stage aggregate {
  for e: event x.c
  symptom s.n key e.what { active: count(a: symptom s.a where a.dev == e.what), all: count(a: symptom s.a) }
}
)attr");
  auto v = run_both(program, context(1),
                    {
                        line("node-01", "app", kT0, "A 1 dev=d1"),
                        line("node-01", "app", kT0, "A 1 dev=d2"),
                        line("node-01", "app", kT0, "A 1 dev=d3"),
                        line("node-01", "app", kT0 + kSec, "B 1 dev=d2"),
                        line("node-01", "kernel", kT0 + 2 * kSec, "C d1 n=1"),
                        line("node-01", "kernel", kT0 + 2 * kSec, "C d2 n=1"),
                    });
  CHECK(int_field(v, "s.n@node-01#d1", "active") == 1);
  CHECK(int_field(v, "s.n@node-01#d2", "active") == 0);
  CHECK(int_field(v, "s.n@node-01#d1", "all") == 2);
}

// Priorities from the codes of the A lines; every count compares the range
// to a walk of all symptoms (run_both), with each operator and after
// demotions (swept buckets) and `set priority` (the priority order rebuilt).
TEST_CASE("priority ranges: each operator counts what a walk counts, after demotions and new priorities") {
  auto program = program_for(kExtractors + R"attr(
rule S stage symptoms {
  for e: event x.a
  symptom s.a key e.dev priority e.code { dev: e.dev }
}
rule Lower stage aggregate {
  for e: event x.b
  demote d: symptom s.a where d.priority < e.code because "below {e.code}"
}
rule Raise stage scrub {
  for s: symptom s.a where s.priority >= 9 and s.priority <= 9
  set s.priority = 100
}
rule Count stage aggregate {
  for e: event x.c
  symptom s.n key e.what {
    lt: count(a: symptom s.a where a.priority < e.n),
    le: count(a: symptom s.a where a.priority <= e.n),
    gt: count(a: symptom s.a where a.priority > e.n),
    ge: count(a: symptom s.a where e.n <= a.priority),
    all: count(a: symptom s.a)
  }
}
)attr");
  std::vector<Observation> obs;
  // 40 symptoms, priorities 1..40 (d1..d40), in time order; d9 is raised to 100.
  for (int i = 1; i <= 40; ++i) obs.push_back(line("node-01", "app", kT0 + i * kSec, fmt::format("A {} dev=d{}", i, i)));
  obs.push_back(line("node-01", "app", kT0 + 50 * kSec, "B 5 dev=x"));  // demotes priorities 1..4
  obs.push_back(line("node-01", "app", kT0 + 51 * kSec, "B 12 dev=x"));  // then 5..11 but d9, raised before
  obs.push_back(line("node-01", "kernel", kT0 + 60 * kSec, "C t20 n=20"));
  obs.push_back(line("node-01", "kernel", kT0 + 60 * kSec, "C t3 n=3"));
  obs.push_back(line("node-01", "kernel", kT0 + 60 * kSec, "C t100 n=100"));
  auto v = run_both(program, context(1), obs);
  // Active: d9 (100), d12..d40 (12..40): 30 symptoms.
  CHECK(symptom(v, "s.a@node-01#d9").state == SymptomState::Active);
  CHECK(symptom(v, "s.a@node-01#d11").state == SymptomState::Demoted);
  CHECK(int_field(v, "s.n@node-01#t20", "all") == 30);
  CHECK(int_field(v, "s.n@node-01#t20", "lt") == 8);   // 12..19
  CHECK(int_field(v, "s.n@node-01#t20", "le") == 9);   // 12..20
  CHECK(int_field(v, "s.n@node-01#t20", "gt") == 21);  // 21..40 and d9
  CHECK(int_field(v, "s.n@node-01#t20", "ge") == 22);
  CHECK(int_field(v, "s.n@node-01#t3", "lt") == 0);
  CHECK(int_field(v, "s.n@node-01#t3", "gt") == 30);
  CHECK(int_field(v, "s.n@node-01#t100", "ge") == 1);  // d9 alone, at its new priority
  CHECK(int_field(v, "s.n@node-01#t100", "lt") == 29);
}

// The shape of HighestPriorityCauseWins: many equal winners, each demoting
// what is below it. Demotions name the first winner in the `for` order,
// which the range must not change (run_both compares the JSON, causes
// included); each winner after the first finds nothing left to walk.
TEST_CASE("priority ranges: equal winners demote the rest once, in the for order") {
  auto program = program_for(kExtractors + R"attr(
rule S stage symptoms {
  for e: event x.a
  symptom s.a key e.dev priority e.code { dev: e.dev }
}
rule Wins stage final {
  for x: symptom s.a where x.priority >= 50 and x.priority == max(y: symptom s.a, y.priority)
  demote z: symptom s.a where z.priority < x.priority because "lower than {x.id}"
}
)attr");
  std::vector<Observation> obs;
  for (int i = 0; i < 60; ++i)
    obs.push_back(line(i % 2 ? "node-01" : "node-02", "app", kT0 + i * kSec, fmt::format("A {} dev=d{}", i % 3 ? 90 : 20 + i, i)));
  auto v = run_both(program, context(2), obs);
  int active = 0, demoted = 0;
  for (const auto& s : v.symptoms) {
    if (s.state == SymptomState::Active) {
      ++active;
      CHECK(s.priority == 90);
    } else {
      ++demoted;
      REQUIRE(s.demoted_by);
      CHECK(s.demoted_by->reason == "lower than s.a@node-01#d1");  // d1: the first winner in time
    }
  }
  CHECK(active == 40);
  CHECK(demoted == 20);
}

TEST_CASE("memoized values follow their inputs: a closed count over the kind a rule is creating") {
  auto program = program_for(kExtractors + R"attr(
rule S stage symptoms {
  for e: event x.a
  symptom s.a key e.code { seen: count(t: symptom s.a), seen_other_kind: count(t: symptom s.b) }
}
rule B stage symptoms {
  for e: event x.b
  symptom s.b key e.code { seen_a: count(t: symptom s.a), demoted_a: count(t: symptom s.a where t.count > 1) }
}
)attr");
  auto v = run_both(program, context(1),
                    {
                        line("node-01", "app", kT0, "A 1 dev=d1"),
                        line("node-01", "app", kT0 + kSec, "A 2 dev=d1"),
                        line("node-01", "app", kT0 + 2 * kSec, "A 2 dev=d1"),
                        line("node-01", "app", kT0 + 3 * kSec, "A 3 dev=d1"),
                        line("node-01", "app", kT0 + 4 * kSec, "B 1 dev=d1"),
                    });
  CHECK(int_field(v, "s.a@node-01#1", "seen") == 0);
  CHECK(int_field(v, "s.a@node-01#2", "seen") == 1);
  CHECK(int_field(v, "s.a@node-01#3", "seen") == 2);
  CHECK(int_field(v, "s.b@node-01#1", "seen_a") == 3);
  CHECK(int_field(v, "s.b@node-01#1", "demoted_a") == 1);
}

TEST_CASE("values kept per parameter follow their inputs and tell parameters apart") {
  // count(t ... t.dev == e.dev) is kept per e.dev, but each symptom the rule
  // creates changes its input; count(o ... on same node ...) is kept per
  // (e.dev, e's node) and its input never changes while the rule runs.
  auto program = program_for(kExtractors + R"attr(
rule S stage symptoms {
  for e: event x.a
  symptom s.a key e.code {
    dev: e.dev,
    same_dev_seen: count(t: symptom s.a where t.dev == e.dev),
    node_events: count(o: event x.a on same node where o.dev == e.dev)
  }
}
)attr");
  auto v = run_both(program, context(2),
                    {
                        line("node-01", "app", kT0, "A 1 dev=d1"),
                        line("node-01", "app", kT0 + kSec, "A 2 dev=d1"),
                        line("node-01", "app", kT0 + 2 * kSec, "A 3 dev=d2"),
                        line("node-02", "app", kT0 + 3 * kSec, "A 4 dev=d1"),
                    });
  CHECK(int_field(v, "s.a@node-01#1", "same_dev_seen") == 0);
  CHECK(int_field(v, "s.a@node-01#2", "same_dev_seen") == 1);
  CHECK(int_field(v, "s.a@node-01#3", "same_dev_seen") == 0);
  CHECK(int_field(v, "s.a@node-02#4", "same_dev_seen") == 2);
  CHECK(int_field(v, "s.a@node-01#1", "node_events") == 2);
  CHECK(int_field(v, "s.a@node-01#2", "node_events") == 2);
  CHECK(int_field(v, "s.a@node-01#3", "node_events") == 1);
  CHECK(int_field(v, "s.a@node-02#4", "node_events") == 1);
}

TEST_CASE("derived events join their indexes after the rule that emits them") {
  // Early0 builds the (x.burst, node, dev) index while there are no bursts
  // yet (Burst0 only declares the kind's fields: it emits nothing); Early
  // shares the index and must see it rebuilt with Burst's output.
  auto program = program_for(kExtractors + R"attr(
rule Burst0 stage early {
  for e: event x.b where e.code > 100
  emit x.burst { dev: e.dev, n: 0 }
}
rule Early0 stage early {
  for e: event x.a
  where count(o: event x.burst on same node where o.dev == e.dev) == 0
  emit x.seen0 { dev: e.dev }
}
rule Burst stage early {
  for e: event x.a
  group by e.node, e.dev within 10s
  emit x.burst { dev: e.dev, n: count() }
}
rule Early stage early {
  for e: event x.a
  where count(o: event x.burst on same node where o.dev == e.dev) >= 1
  emit x.seen { dev: e.dev }
}
rule Repeats stage symptoms {
  for f: event x.burst
  symptom s.r key f.dev {
    bursts: count(o: event x.burst on same node where o.dev == f.dev),
    seen: count(o: event x.seen on same node where o.dev == f.dev),
    seen0: count(o: event x.seen0 on same node where o.dev == f.dev)
  }
}
)attr");
  auto v = run_both(program, context(2),
                    {
                        line("node-01", "app", kT0, "A 1 dev=d1"),
                        line("node-01", "app", kT0 + kSec, "A 1 dev=d1"),
                        line("node-01", "app", kT0 + 60 * kSec, "A 1 dev=d1"),
                        line("node-02", "app", kT0, "A 1 dev=d1"),
                    });
  CHECK(int_field(v, "s.r@node-01#d1", "bursts") == 2);
  CHECK(int_field(v, "s.r@node-02#d1", "bursts") == 1);
  CHECK(int_field(v, "s.r@node-01#d1", "seen") == 3);  // Early ran after Burst: its events were indexed
  CHECK(int_field(v, "s.r@node-01#d1", "seen0") == 3);  // Early0 ran before: no bursts yet
}

// --------------------------------------------------------- differential test

namespace {

// A random catalog of the join shapes the bundled catalog uses (same and
// other nodes, windows, keys of each type, nested and closed aggregates,
// symptom queries while symptoms are made and merged, demotes over queries,
// derived events), with random constants; and random evidence for it.
class RandomCase {
 public:
  explicit RandomCase(uint64_t seed) : rng_(seed) {}

  std::string catalog() {
    std::string t = kExtractors;
    t += fmt::format(R"attr(
rule Bursts stage early {{
  for e: event x.a
  group by e.node, e.dev within {0}s
  emit x.burst {{ dev: e.dev, n: count() }}
}}
rule ASymptom stage symptoms {{
  for e: event x.a where {1}
  symptom s.a key e.dev priority e.code {{
    summary: "a {{e.dev}} on {{e.node}}",
    same: count(o: event x.b on {2} where o.dev == e.dev),
    peers: count(o: event x.a where coalesce(o.peer, "") == coalesce(e.peer, "") and o.code >= {3}),
    near: exists(o: event x.c on same node where o.n == e.code % 5 within {4}s {5} e),
    top: max(o: event x.b where o.dev == e.dev and o.odd == e.odd, o.code),
    hosts: nodes(o: event x.a where o.dev == e.dev),
    most: count(o: event x.a where o.code == max(k: event x.a, k.code))
  }}
}}
rule CSymptom stage symptoms {{
  for c: event x.c
  symptom s.c key c.what priority c.n {{
    what: c.what,
    mine: count(t: symptom s.c where t.key == c.what),
    near: count(t: symptom s.c on same node within {6}s before c),
    all: count(t: symptom s.* where t.priority >= {7})
  }}
}}
rule BMerge stage symptoms {{
  for e: event x.b where e.code % {8} == 0
  symptom s.c key "w" + str(e.code % 3) {{ what: "w" + str(e.code % 3) }}
}}
rule BurstSymptom stage symptoms {{
  for f: event x.burst where count(o: event x.burst on same node where o.dev == f.dev) >= {9}
  symptom s.burst key f.dev {{ n: f.n }}
}}
rule Agg stage aggregate {{
  for s: symptom s.a
  where count(t: symptom s.c on same node) >= {10} or s.priority == max(q: symptom s.a, q.priority)
  symptom s.agg key s.key {{ by: s.id, peers: count(t: symptom s.* where t.key == s.key) }}
}}
rule Cascade stage final {{
  for x: symptom s.c
  demote y: symptom s.a on {11} where y.key == "d{12}" or y.priority < x.count because "after {{x.id}}"
}}
rule Window stage final {{
  for x: symptom s.agg where x.peers >= {13}
  demote y: symptom s.* where y.id != x.id and y.key != x.key within {14}s after x because "after {{x.id}}"
}}
rule ClassifyAgg stage outcome {{
  for s: symptom s.agg
  classify s as hardware "x.agg"
}}
rule ClassifyBurst stage outcome {{
  for s: symptom s.burst
  where count(t: symptom s.burst where t.node == s.node) >= {15}
  classify s as software "x.burst"
}}
rule Hang stage post_outcome {{
  where outcome.status == "ambiguous"
  where exists(w: symptom s.c where w.first < min(c: symptom * where c.priority >= {16}, c.first))
  set outcome unattributed because "an earlier s.c"
}}
)attr",
                     pick(5, 60), pick_of({"e.code >= 0", "e.code > " + std::to_string(pick(0, 5)),
                                           "exists(o: event x.b on same node where o.dev == e.dev)",
                                           "none(o: event x.c where o.what == \"w" + std::to_string(pick(0, 2)) + "\")",
                                           "count(o: event x.a where o.dev == e.dev) >= " + std::to_string(pick(1, 3))}),
                     pick_of({"same node", "other nodes", "any node"}), pick(0, 9), pick(1, 120),
                     pick_of({"before", "after", "around"}), pick(1, 120), pick(0, 9), pick(1, 4), pick(1, 3), pick(0, 3),
                     pick_of({"same node", "other nodes", "any node"}), pick(0, 3), pick(1, 4), pick(5, 200), pick(1, 3),
                     pick(0, 9));
    return t;
  }

  std::vector<Observation> evidence(int nodes) {
    std::vector<Observation> out;
    int n = pick(10, 80);
    for (int i = 0; i < n; ++i) {
      std::string host = "node-0" + std::to_string(pick(1, nodes));
      // Many ties in time, and some lines with no time of their own.
      std::optional<int64_t> ts;
      if (pick(0, 9) > 0) ts = kT0 + pick(0, 40) * 5 * kSec;
      switch (pick(0, 2)) {
        case 0: {
          std::string peer = pick(0, 2) ? " peer=p" + std::to_string(pick(0, 2)) : "";
          out.push_back(line(host, "app", ts, "A " + std::to_string(pick(0, 9)) + " dev=d" + std::to_string(pick(0, 3)) + peer));
          break;
        }
        case 1: out.push_back(line(host, "app", ts, "B " + std::to_string(pick(0, 9)) + " dev=d" + std::to_string(pick(0, 3)))); break;
        default:
          out.push_back(line(host, "kernel", ts, "C w" + std::to_string(pick(0, 2)) + " n=" + std::to_string(pick(0, 4))));
      }
    }
    return out;
  }

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

 private:
  std::string pick_of(std::vector<std::string> options) {
    return options[static_cast<size_t>(pick(0, static_cast<int>(options.size()) - 1))];
  }
  std::mt19937_64 rng_;
};

}  // namespace

TEST_CASE("differential: indexed and unindexed evaluation give the same verdict on random catalogs (interpreter)") {
  int verdicts_with_demotions = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RandomCase c(seed);
    std::string text = c.catalog();
    auto program = program_for(text);
    for (int round = 0; round < 3; ++round) {
      int nodes = c.pick(1, 4);
      auto obs = c.evidence(nodes);
      INFO("seed " << seed << " round " << round);
      Verdict indexed = run(program, context(nodes), obs, true);
      Verdict plain = run(program, context(nodes), obs, false);
      std::string a = verdict_text(indexed), b = verdict_text(plain);
      if (a != b) INFO(text);
      REQUIRE(a == b);
      for (const auto& s : indexed.symptoms)
        if (s.state != SymptomState::Active) {
          ++verdicts_with_demotions;
          break;
        }
    }
  }
  CHECK(verdicts_with_demotions > 10);  // the cases exercise the demotions, not only symptom creation
}

TEST_CASE("differential: indexed evaluation with native code agrees with unindexed interpretation") {
  std::string why;
  if (!jit_available(why)) {
    MESSAGE("JIT unavailable: " << why);
    return;
  }
  for (uint64_t seed = 101; seed <= 103; ++seed) {
    RandomCase c(seed);
    auto cat = compile_ok(c.catalog());
    JitOptions o;
    o.use_cache = false;
    std::string error;
    auto native = Program::build(cat, error, jit_factory(o));
    REQUIRE(native);
    REQUIRE(native->native());
    auto interp = Program::build(cat, error);
    REQUIRE(interp);
    for (int round = 0; round < 4; ++round) {
      int nodes = c.pick(1, 4);
      auto obs = c.evidence(nodes);
      INFO("seed " << seed << " round " << round);
      Verdict jit_indexed = run(native, context(nodes), obs, true);
      Verdict plain = run(interp, context(nodes), obs, false);
      jit_indexed.engine = {};
      plain.engine = {};
      CHECK(verdict_text(jit_indexed) == verdict_text(plain));
    }
  }
}
