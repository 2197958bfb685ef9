// Parser tests: what the text of a .attr file turns into. Each test compiles a
// small source with compile_sources and inspects the resulting IR (names,
// literals, tree shapes), or the E0001 diagnostic for text that does not parse.
// Tree shapes are compared as s-expressions (tests/support/test_support.h) so a
// precedence mistake shows up as a readable one-line difference.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::at;
using culprit::testing::codes;
using culprit::testing::compile;
using culprit::testing::compile_ok;
using culprit::testing::kErrExtractor;
using culprit::testing::only_diagnostic;
using culprit::testing::sexpr;

namespace {

// The IR of EXPR written as a symptom field inside a rule bound to app.err
// events (slot 0 is `e`). Field initializers accept every type, so this works
// for expressions of any type.
std::string value_shape(const std::string& expr) {
  auto cat = compile_ok(std::string(kErrExtractor) +
                        "rule T stage symptoms {\n  for e: event app.err\n  symptom t.x { v: " + expr + " }\n}\n");
  REQUIRE(cat->rules.size() == 1);
  REQUIRE(cat->rules[0].actions.size() == 1);
  REQUIRE(cat->rules[0].actions[0].fields.size() == 1);
  return sexpr(cat->rules[0].actions[0].fields[0].value, *cat);
}

// The IR of EXPR used as a condition (must be bool). A `where` written right
// after `for e: event app.err` belongs to the query (grammar: `query` ends in an
// optional `where`), so the condition is the `for` query's filter.
std::string where_shape(const std::string& expr) {
  auto cat = compile_ok(std::string(kErrExtractor) + "rule T stage symptoms {\n  for e: event app.err\n  where " + expr +
                        "\n  symptom t.x { summary: \"x\" }\n}\n");
  REQUIRE(cat->rules[0].for_query.has_value());
  REQUIRE(cat->rules[0].for_query->filter.has_value());
  CHECK(cat->rules[0].wheres.empty());
  return sexpr(*cat->rules[0].for_query->filter, *cat);
}

// The constant a literal compiles to.
Value literal(const std::string& text) {
  auto cat = compile_ok(std::string(kErrExtractor) +
                        "rule T stage symptoms {\n  for e: event app.err\n  symptom t.x { v: " + text + " }\n}\n");
  const auto& e = cat->rules[0].actions[0].fields[0].value;
  REQUIRE(e.op == ir::Op::Const);
  return e.constant;
}

}  // namespace

TEST_CASE("parser: catalog header names the catalog") {
  auto cat = compile_ok("catalog \"gpu-rules\" version \"1.2.3\"\n");
  CHECK(cat->name == "gpu-rules");
  CHECK(cat->version == "1.2.3");
  // Without a header the defaults documented in ir.h apply.
  auto anon = compile_ok("# nothing but a comment\n");
  CHECK(anon->name == "unnamed");
  CHECK(anon->version == "0.0.0");
}

TEST_CASE("parser: an empty file and a comment-only file compile to an empty catalog") {
  for (const char* text : {"", "\n\n", "# a\n   # b\n\t\n", "# no trailing newline"}) {
    CAPTURE(text);
    auto cat = compile_ok(text);
    CHECK(cat->extractors.empty());
    CHECK(cat->rules.empty());
    CHECK(cat->scenarios.empty());
  }
}

TEST_CASE("parser: extractor sources, regex body, flags and captures") {
  auto cat = compile_ok(R"(
extractor X from kernel, app, kernel {
  match /path \/dev\/(?<dev>nvidia\d+) (?P<state>up|down) (x|y)/is
  emit dev.state { dev: dev, state: state }
  test { line "PATH /dev/nvidia0 UP x" expect dev.state { dev: "nvidia0", state: "UP" } }
  test { line "path /dev/sda up x" expect none }
}
)");
  REQUIRE(cat->extractors.size() == 1);
  const auto& x = cat->extractors[0];
  CHECK(x.name == "X");
  // Sorted and de-duplicated, as ir.h promises.
  CHECK(x.sources == std::vector<std::string>{"app", "kernel"});
  // `\/` is the way to write a slash inside /.../ and arrives as a plain '/'.
  CHECK(x.pattern == R"(path /dev/(?<dev>nvidia\d+) (?P<state>up|down) (x|y))");
  // RE2 needs the (?P<name> spelling; (?P< is left alone.
  CHECK(x.re2_pattern == R"(path /dev/(?P<dev>nvidia\d+) (?P<state>up|down) (x|y))");
  CHECK(x.caseless);
  CHECK(x.dotall);
  // One entry per group, "" for the unnamed one.
  CHECK(x.capture_names == std::vector<std::string>{"dev", "state", ""});
  CHECK(cat->event_kinds[static_cast<size_t>(x.kind)].name == "dev.state");
  REQUIRE(x.tests.size() == 2);
  CHECK_FALSE(x.tests[0].expect_none);
  CHECK(x.tests[0].line == "PATH /dev/nvidia0 UP x");
  CHECK(x.tests[1].expect_none);
}

TEST_CASE("parser: regex without flags is case-sensitive and single-line") {
  auto cat = compile_ok(kErrExtractor);
  CHECK_FALSE(cat->extractors[0].caseless);
  CHECK_FALSE(cat->extractors[0].dotall);
}

TEST_CASE("parser: test titles and string escapes in test lines") {
  auto cat = compile_ok(R"attr(
extractor Q from app {
  match /say "(?<w>[^"]*)"/
  emit app.say { w: w }
  test "quoted \"word\"" { line "say \"hi\\there\"" expect app.say { w: "hi\\there" } }
  test { line "say nothing" expect none }
}
)attr");
  const auto& t = cat->extractors[0].tests;
  REQUIRE(t.size() == 2);
  CHECK(t[0].title == "quoted \"word\"");
  CHECK(t[0].line == "say \"hi\\there\"");
  CHECK(t[1].title.empty());
  REQUIRE(t[0].expected.size() == 1);
  CHECK(t[0].expected[0].second.s == "hi\\there");
}

TEST_CASE("parser: integer, hex, float, bool and null literals") {
  CHECK(literal("42").type == Type::Int);
  CHECK(literal("42").i == 42);
  CHECK(literal("0").i == 0);
  CHECK(literal("9223372036854775807").i == std::numeric_limits<int64_t>::max());
  CHECK(literal("0x3F").type == Type::Int);
  CHECK(literal("0x3F").i == 63);
  CHECK(literal("0X3f").i == 63);
  CHECK(literal("0xdeadBEEF").i == 0xdeadbeefLL);
  // Hex literals are register words: all 64 bits may be used.
  CHECK(literal("0xFFFFFFFFFFFFFFFF").i == -1);
  CHECK(literal("0x8000000000000000").i == std::numeric_limits<int64_t>::min());
  CHECK(literal("1.5").type == Type::Float);
  CHECK(literal("1.5").f == doctest::Approx(1.5));
  CHECK(literal("0.25").f == doctest::Approx(0.25));
  CHECK(literal("true").type == Type::Bool);
  CHECK(literal("true").b);
  CHECK_FALSE(literal("false").b);
  CHECK(literal("null").type == Type::Null);
  // A unary minus on a literal is folded into the constant.
  CHECK(literal("-5").i == -5);
  CHECK(literal("-1.5").f == doctest::Approx(-1.5));
  CHECK(literal("-0x10").i == -16);
}

TEST_CASE("parser: duration literals in every unit") {
  constexpr int64_t s = 1'000'000'000;
  const std::pair<const char*, int64_t> cases[] = {
      {"30s", 30 * s},          {"500ms", 500'000'000}, {"3m", 180 * s}, {"1h", 3600 * s},
      {"2d", 2 * 86400 * s},    {"10us", 10'000},       {"5ns", 5},      {"0s", 0},
      {"106751d", 106751LL * 86400 * s},  // the largest whole number of days in int64 nanoseconds
  };
  for (const auto& c : cases) {
    const char* text = c.first;  // (not a structured binding: clang 14 cannot capture one, and CAPTURE does)
    int64_t ns = c.second;
    CAPTURE(text);
    Value v = literal(text);
    CHECK(v.type == Type::Duration);
    CHECK(v.i == ns);
  }
  CHECK(literal("-30s").i == -30 * s);
}

TEST_CASE("parser: string literal escapes") {
  CHECK(literal(R"("plain")").s == "plain");
  CHECK(literal(R"("a\"b")").s == "a\"b");
  CHECK(literal(R"("back\\slash")").s == "back\\slash");
  CHECK(literal(R"("line\nbreak")").s == "line\nbreak");
  CHECK(literal(R"("tab\there")").s == "tab\there");
  CHECK(literal(R"("")").s.empty());
}

TEST_CASE("parser: out-of-range literals are syntax errors at the literal") {
  SUBCASE("integer one past INT64_MAX") {
    auto loaded = compile(std::string(kErrExtractor) +
                          "rule T stage symptoms {\n  for e: event app.err\n  where e.code == 9223372036854775808\n"
                          "  symptom t.x { summary: \"x\" }\n}\n");
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0001");
    CHECK(at(d) == "10:19");
    CHECK(d.message.find("9223372036854775808") != std::string::npos);
  }
  SUBCASE("hex wider than 64 bits") {
    auto loaded = compile(std::string(kErrExtractor) +
                          "rule T stage symptoms {\n  for e: event app.err\n  where e.code == 0x1FFFFFFFFFFFFFFFF\n"
                          "  symptom t.x { summary: \"x\" }\n}\n");
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0001");
    CHECK(at(d) == "10:19");
  }
  SUBCASE("duration that overflows int64 nanoseconds") {
    auto loaded = compile(std::string(kErrExtractor) +
                          "rule T stage symptoms {\n  for e: event app.err\n  where e.ts - 106752d is not null\n"
                          "  symptom t.x { summary: \"x\" }\n}\n");
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0001");
    CHECK(at(d) == "10:16");
    CHECK(d.message.find("106752d") != std::string::npos);
  }
}

TEST_CASE("parser: bit operators bind tighter than comparisons") {
  // The documented example: `a & 0x3F == 1` is `(a & 0x3F) == 1`.
  CHECK(where_shape("e.code & 0x3F == 1") == "(== (& e0.code 63) 1)");
  CHECK(where_shape("e.code | 1 != 0") == "(!= (| e0.code 1) 0)");
  CHECK(where_shape("e.code ^ 2 < 3") == "(< (^ e0.code 2) 3)");
  CHECK(where_shape("e.code >> 4 & 1 == 1") == "(== (& (>> e0.code 4) 1) 1)");
}

TEST_CASE("parser: arithmetic and bit precedence ladder") {
  CHECK(value_shape("1 + 2 * 3") == "(+ 1 (* 2 3))");
  CHECK(value_shape("1 * 2 + 3") == "(+ (* 1 2) 3)");
  CHECK(value_shape("7 % 4 - 1") == "(- (% 7 4) 1)");
  CHECK(value_shape("1 << 2 + 1") == "(<< 1 (+ 2 1))");
  CHECK(value_shape("1 | 2 ^ 3 & 4") == "(| 1 (^ 2 (& 3 4)))");
  CHECK(value_shape("4 & 1 << 2") == "(& 4 (<< 1 2))");
  // Left associativity.
  CHECK(value_shape("10 - 3 - 2") == "(- (- 10 3) 2)");
  CHECK(value_shape("1 << 2 << 3") == "(<< (<< 1 2) 3)");
  // Parentheses override.
  CHECK(value_shape("(1 + 2) * 3") == "(* (+ 1 2) 3)");
  // Unary minus binds tighter than '*', field access tighter than unary minus.
  CHECK(value_shape("-e.code * 2") == "(* (neg e0.code) 2)");
}

TEST_CASE("parser: boolean precedence: comparison, not, and, or") {
  CHECK(where_shape("e.fatal or e.code == 1 and e.dev == \"a\"") ==
        "(or e0.fatal (and (== e0.code 1) (== e0.dev \"a\")))");
  CHECK(where_shape("not e.code == 1") == "(not (== e0.code 1))");
  CHECK(where_shape("not e.fatal and e.fatal") == "(and (not e0.fatal) e0.fatal)");
  CHECK(where_shape("e.code + 1 > 2 * 3") == "(> (+ e0.code 1) (* 2 3))");
  CHECK(where_shape("e.dev is not null and e.dev matches /^a/") ==
        "(and (is-not-null e0.dev) (matches e0.dev /^a/))");
  CHECK(where_shape("e.code not in [1, 2] or e.code in [3]") == "(or (not-in e0.code 1 2) (in e0.code 3))");
}

TEST_CASE("parser: string interpolation becomes an Interpolate expression") {
  CHECK(value_shape("\"GPU {e.dev} on {e.node}\"") == "(interp \"GPU \" e0.dev \" on \" e0.node)");
  CHECK(value_shape("\"{e.code}\"") == "(interp e0.code)");
  CHECK(value_shape("\"{ e.dev }!\"") == "(interp e0.dev \"!\")");
  // Doubled braces are literal braces, not interpolation.
  CHECK(value_shape("\"{{literal}} {e.dev}\"") == "(interp \"{literal} \" e0.dev)");
  CHECK(value_shape("\"{{}}\"") == "(interp \"{}\")");
  // Without braces a string stays a constant.
  CHECK(value_shape("\"no braces\"") == "\"no braces\"");
}

TEST_CASE("parser: calls, query aggregates and null tests") {
  CHECK(value_shape("int(e.dev)") == "(int e0.dev)");
  CHECK(value_shape("coalesce(int(e.dev), e.code, 0)") == "(coalesce (int e0.dev) e0.code 0)");
  CHECK(value_shape("duration(e.code, \"ms\")") == "(duration e0.code \"ms\")");
  CHECK(value_shape("count(y: event app.err on same node)") == "(count-query q0)");
  CHECK(value_shape("exists(y: event app.err where y.code > 1)") == "(exists q0)");
  CHECK(value_shape("max(y: event app.err, y.code)") == "(max q0 e1.code)");
  CHECK(value_shape("e.dev is null") == "(is-null e0.dev)");
}

TEST_CASE("parser: the first `where` after `for` filters the query, later ones are rule conditions") {
  auto cat = compile_ok(std::string(kErrExtractor) + R"(
rule T stage symptoms {
  for e: event app.err
  where e.code > 1
  where e.dev == "a"
  where e.fatal
  symptom t.x { summary: "x" }
}
)");
  const auto& r = cat->rules[0];
  REQUIRE(r.for_query->filter.has_value());
  CHECK(sexpr(*r.for_query->filter, *cat) == "(> e0.code 1)");
  REQUIRE(r.wheres.size() == 2);
  CHECK(sexpr(r.wheres[0], *cat) == "(== e0.dev \"a\")");
  CHECK(sexpr(r.wheres[1], *cat) == "e0.fatal");
}

TEST_CASE("parser: a query's parts land in the IR") {
  auto cat = compile_ok(std::string(kErrExtractor) + R"(
rule T stage symptoms {
  for e: event app.err on any node where e.code > 3
  where exists(y: event app.err on other nodes within 30s before e)
  where exists(z: event app.err on same node within 2m after e)
  where exists(w: event app.err within 500ms around e)
  symptom t.x { summary: "x" }
}
)");
  const auto& r = cat->rules[0];
  REQUIRE(r.for_query.has_value());
  CHECK_FALSE(r.for_query->symptom);
  CHECK(r.for_query->relation == ir::NodeRelation::Any);
  REQUIRE(r.for_query->filter.has_value());
  CHECK(sexpr(*r.for_query->filter, *cat) == "(> e0.code 3)");
  REQUIRE(r.queries.size() == 3);
  CHECK(r.queries[0].relation == ir::NodeRelation::Other);
  CHECK(r.queries[0].has_within);
  CHECK(r.queries[0].within_ns == 30'000'000'000LL);
  CHECK(r.queries[0].direction == ir::WithinDirection::Before);
  CHECK(r.queries[0].anchor_slot == 0);
  CHECK(r.queries[1].relation == ir::NodeRelation::Same);
  CHECK(r.queries[1].direction == ir::WithinDirection::After);
  CHECK(r.queries[1].within_ns == 120'000'000'000LL);
  CHECK(r.queries[2].relation == ir::NodeRelation::Any);
  CHECK(r.queries[2].direction == ir::WithinDirection::Around);
  CHECK(r.queries[2].within_ns == 500'000'000LL);
  // Every query binds its own slot, distinct from the `for` binding.
  CHECK(r.queries[0].bind_slot != 0);
  CHECK(r.queries[1].bind_slot != r.queries[0].bind_slot);
  CHECK(r.queries[2].bind_slot != r.queries[1].bind_slot);
  CHECK(r.slot_count == 4);
}

TEST_CASE("parser: kind patterns: exact, family and any") {
  auto cat = compile_ok(R"(
extractor A from app {
  match /a(?<x>\d)/
  emit nccl.warn { x: x }
  test { line "a1" expect nccl.warn }
  test { line "b" expect none }
}
extractor B from app {
  match /b(?<x>\d)/
  emit nccl.ib.error { x: x }
  test { line "b1" expect nccl.ib.error }
  test { line "a" expect none }
}
extractor C from app {
  match /c(?<x>\d)/
  emit ncclx { x: x }
  test { line "c1" expect ncclx }
  test { line "a" expect none }
}
rule Family stage symptoms {
  for e: event nccl.*
  symptom s.family { x: e.x }
}
rule Exact stage symptoms {
  for e: event nccl.warn
  symptom s.exact { summary: "x" }
}
rule Any stage symptoms {
  for e: event *
  symptom s.any { summary: "x" }
}
)");
  auto names = [&](const ir::Query& q) {
    std::vector<std::string> out;
    for (int32_t k : q.kinds) out.push_back(cat->event_kinds[static_cast<size_t>(k)].name);
    std::sort(out.begin(), out.end());
    return out;
  };
  // `nccl.*` is every kind strictly under `nccl.`, not `ncclx`.
  CHECK(names(*cat->rules[0].for_query) == std::vector<std::string>{"nccl.ib.error", "nccl.warn"});
  CHECK(names(*cat->rules[1].for_query) == std::vector<std::string>{"nccl.warn"});
  // `*` is every event kind, the built-in metric.sample included.
  CHECK(names(*cat->rules[2].for_query) ==
        std::vector<std::string>{"metric.sample", "nccl.ib.error", "nccl.warn", "ncclx"});
  // Query kind lists are sorted ids.
  for (const auto& r : cat->rules) CHECK(std::is_sorted(r.for_query->kinds.begin(), r.for_query->kinds.end()));
}

TEST_CASE("parser: rules are ordered by stage, keeping catalog order inside a stage") {
  auto cat = compile_ok(std::string(kErrExtractor) + R"(
rule Late stage final {
  for s: symptom t.a
  set s.priority = 5
}
rule First stage symptoms {
  for e: event app.err
  symptom t.a { summary: "a" }
}
rule Second stage symptoms {
  for e: event app.err
  symptom t.b { summary: "b" }
}
rule Derive stage early {
  for e: event app.err
  emit app.derived { c: e.code }
}
)");
  REQUIRE(cat->rules.size() == 4);
  CHECK(cat->rules[0].name == "Derive");
  CHECK(cat->rules[0].stage == ir::Stage::Early);
  CHECK(cat->rules[1].name == "First");
  CHECK(cat->rules[2].name == "Second");
  CHECK(cat->rules[3].name == "Late");
  CHECK(cat->rules[3].stage == ir::Stage::Final);
  // `index` keeps the declaration order.
  CHECK(cat->rules[0].index == 3);
  CHECK(cat->rules[1].index == 1);
  CHECK(cat->rules[2].index == 2);
  CHECK(cat->rules[3].index == 0);
}

TEST_CASE("parser: every stage name is accepted, including ones spelled like keywords") {
  // One action the documentation allows in each stage; `scrub` is also an
  // action keyword, and the grammar still lets it name a stage.
  const struct {
    const char* stage;
    ir::Stage expected;
    const char* body;
  } cases[] = {
      {"early", ir::Stage::Early, "for e: event app.err\n  emit app.derived { c: e.code }"},
      {"symptoms", ir::Stage::Symptoms, "for e: event app.err\n  symptom t.b { summary: \"b\" }"},
      {"scrub", ir::Stage::Scrub, "for s: symptom t.a\n  scrub s because \"noise\""},
      {"aggregate", ir::Stage::Aggregate, "for s: symptom t.a\n  symptom t.job on job { summary: \"j\" }"},
      {"final", ir::Stage::Final, "for s: symptom t.a\n  demote s because \"explained\""},
      {"outcome", ir::Stage::Outcome, "for s: symptom t.a\n  classify s as software \"t.a\""},
      {"post_outcome", ir::Stage::PostOutcome, "set outcome unattributed because \"why\""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.stage);
    auto cat = compile_ok(std::string(kErrExtractor) +
                          "rule Make stage symptoms {\n  for e: event app.err\n  symptom t.a { summary: \"a\" }\n}\n"
                          "rule S stage " + c.stage + " {\n  " + c.body + "\n}\n");
    bool found = false;
    for (const auto& r : cat->rules)
      if (r.name == "S") {
        found = true;
        CHECK(r.stage == c.expected);
      }
    CHECK(found);
  }
}

TEST_CASE("parser: actions and their parts") {
  auto cat = compile_ok(std::string(kErrExtractor) + R"(
rule Sym stage symptoms {
  for e: event app.err
  symptom gpu.fault on e.host key e.dev priority e.code * 10 { summary: "fault {e.dev}", code: e.code }
  symptom gpu.job on job { summary: "job-level" }
}
rule Fin stage final {
  for c: symptom gpu.fault
  demote v: symptom gpu.job on any node because "explained by {c.id}"
  demote c because "self"
}
rule Cls stage outcome {
  for s: symptom gpu.fault
  classify s as hardware "gpu.fault"
}
rule Post stage post_outcome {
  where outcome.status == "unattributed"
  set outcome attributed user "user.error" because "exit {terminal.exit_code}"
}
rule Post2 stage post_outcome {
  set outcome no_failure because "done"
}
)");
  REQUIRE(cat->rules.size() == 5);
  const auto& sym = cat->rules[0];
  REQUIRE(sym.actions.size() == 2);
  const auto& a = sym.actions[0];
  CHECK(a.kind == ir::ActionKind::Symptom);
  CHECK(cat->symptom_kinds[static_cast<size_t>(a.kind_id)].name == "gpu.fault");
  CHECK_FALSE(a.on_job);
  REQUIRE(a.node.has_value());
  CHECK(sexpr(*a.node, *cat) == "e0.host");
  REQUIRE(a.key.has_value());
  CHECK(sexpr(*a.key, *cat) == "e0.dev");
  REQUIRE(a.priority.has_value());
  CHECK(sexpr(*a.priority, *cat) == "(* e0.code 10)");
  REQUIRE(a.summary.has_value());
  CHECK(sexpr(*a.summary, *cat) == "(interp \"fault \" e0.dev)");
  // `summary` is not a schema field; `code` is.
  REQUIRE(a.fields.size() == 1);
  const auto& schema = cat->symptom_kinds[static_cast<size_t>(a.kind_id)];
  REQUIRE(schema.fields.size() == 1);
  CHECK(schema.fields[0].name == "code");
  CHECK(schema.fields[0].type == Type::Int);
  CHECK(sym.actions[1].on_job);
  CHECK_FALSE(sym.actions[1].node.has_value());

  const auto& fin = cat->rules[1];
  REQUIRE(fin.actions.size() == 2);
  CHECK(fin.actions[0].kind == ir::ActionKind::Demote);
  REQUIRE(fin.actions[0].query.has_value());
  CHECK(fin.actions[0].query->symptom);
  REQUIRE(fin.actions[0].reason.has_value());
  CHECK(sexpr(*fin.actions[0].reason, *cat) == "(interp \"explained by \" s0.id)");
  CHECK_FALSE(fin.actions[1].query.has_value());
  CHECK(fin.actions[1].target_slot == 0);

  const auto& cls = cat->rules[2].actions[0];
  CHECK(cls.kind == ir::ActionKind::Classify);
  CHECK(cls.target_slot == 0);
  CHECK(cls.domain == "hardware");
  CHECK(cls.sub_domain == "gpu.fault");

  const auto& post = cat->rules[3];
  CHECK(post.stage == ir::Stage::PostOutcome);
  CHECK(sexpr(post.wheres[0], *cat) == "(== outcome.status \"unattributed\")");
  CHECK(post.actions[0].kind == ir::ActionKind::SetOutcome);
  CHECK(post.actions[0].status == "attributed");
  CHECK(post.actions[0].domain == "user");
  CHECK(post.actions[0].sub_domain == "user.error");
  CHECK(sexpr(*post.actions[0].reason, *cat) == "(interp \"exit \" terminal.exit_code)");
  CHECK(cat->rules[4].actions[0].status == "no_failure");
  CHECK(cat->rules[4].actions[0].domain.empty());
}

TEST_CASE("parser: group by with and without a gap") {
  auto cat = compile_ok(std::string(kErrExtractor) + R"(
rule Burst stage symptoms {
  for e: event app.err
  group by e.node, e.dev within 30s
  symptom t.burst key e.dev { n: count(), devs: values(e.dev), d: distinct(e.code), t0: first_ts(), t1: last_ts() }
}
rule All stage symptoms {
  for e: event app.err
  group by e.node
  symptom t.all { n: count() }
}
)");
  const auto& burst = cat->rules[0];
  CHECK(burst.grouped);
  REQUIRE(burst.group_keys.size() == 2);
  CHECK(sexpr(burst.group_keys[0], *cat) == "e0.node");
  CHECK(sexpr(burst.group_keys[1], *cat) == "e0.dev");
  CHECK(burst.group_within_ns == 30'000'000'000LL);
  const auto& schema = cat->symptom_kinds[static_cast<size_t>(burst.actions[0].kind_id)];
  auto type_of = [&](const std::string& f) {
    for (const auto& d : schema.fields)
      if (d.name == f) return d.type;
    FAIL("no field " << f);
    return Type::Null;
  };
  CHECK(type_of("n") == Type::Int);
  CHECK(type_of("devs") == Type::String);
  CHECK(type_of("d") == Type::Int);
  CHECK(type_of("t0") == Type::Time);
  CHECK(type_of("t1") == Type::Time);
  CHECK(cat->rules[1].grouped);
  CHECK(cat->rules[1].group_within_ns == 0);
}

TEST_CASE("parser: keywords stay usable as field, kind and source names") {
  // The grammar's `name` rule admits many keywords; event schemas use such words.
  auto cat = compile_ok(R"(
extractor K from scheduler {
  match /job (?<status>\w+) (?<window>\d+)/
  emit job.status { status: status, window: int(window), count: 1, key: status }
  test { line "job DONE 3" expect job.status { status: "DONE", window: 3, count: 1 } }
  test { line "nothing" expect none }
}
rule R stage symptoms {
  for e: event job.status
  where e.status == "FAILED" and e.count == 1
  symptom job.failed on job { summary: "{e.status} in window {e.window}" }
}
)");
  const auto& schema = cat->event_kinds[static_cast<size_t>(cat->event_kind_id("job.status"))];
  std::vector<std::string> names;
  for (const auto& f : schema.fields) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"status", "window", "count", "key"});
  CHECK(cat->extractors[0].sources == std::vector<std::string>{"scheduler"});
}

TEST_CASE("parser: scenarios") {
  auto cat = compile_ok(std::string(kErrExtractor) + R"(
rule R stage symptoms {
  for e: event app.err
  symptom app.failure { summary: "x" }
}
scenario "two nodes" {
  nodes "node-01", "node-02"
  terminal CANCELLED exit -15
  window "2026-01-01T10:00:00Z" to "2026-01-01T11:00:00Z"
  log "node-02" app "ERR 7 dev=b"
  log "node-01" app "OK"
  expect status unattributed
  expect culprits []
  expect symptom app.* on "node-02" active
  expect no symptom app.failure on "node-01"
}
scenario "defaults" {
  log "node-09" app "ERR 1 dev=a"
  log "node-03" app "ERR 1 dev=a"
  expect culprits ["node-09", "node-03"]
}
)");
  REQUIRE(cat->scenarios.size() == 2);
  const auto& s = cat->scenarios[0];
  CHECK(s.title == "two nodes");
  CHECK(s.nodes == std::vector<std::string>{"node-01", "node-02"});
  CHECK(s.terminal_state == "CANCELLED");
  CHECK(s.terminal_exit == -15);
  CHECK(s.window_start == 1767261600000000000);
  CHECK(s.window_end == 1767265200000000000);
  REQUIRE(s.logs.size() == 2);
  CHECK(s.logs[0].host == "node-02");
  CHECK(s.logs[0].source == "app");
  CHECK(s.logs[0].text == "ERR 7 dev=b");
  REQUIRE(s.expects.size() == 4);
  CHECK(s.expects[0].kind == ast::ScenarioExpectKind::Status);
  CHECK(s.expects[1].kind == ast::ScenarioExpectKind::Culprits);
  CHECK(s.expects[1].culprits.empty());
  CHECK(s.expects[2].kind == ast::ScenarioExpectKind::SymptomState);
  CHECK(s.expects[2].kind_pattern == "app.*");
  CHECK(s.expects[2].node == "node-02");
  CHECK(s.expects[2].value == "active");
  CHECK(s.expects[3].kind == ast::ScenarioExpectKind::NoSymptom);
  // Documented defaults: nodes = hosts with a log line (sorted), terminal FAILED exit 1, no window.
  const auto& d = cat->scenarios[1];
  CHECK(d.nodes == std::vector<std::string>{"node-03", "node-09"});
  CHECK(d.terminal_state == "FAILED");
  CHECK(d.terminal_exit == 1);
  CHECK_FALSE(d.window_start.has_value());
  CHECK_FALSE(d.window_end.has_value());
}

TEST_CASE("parser: syntax errors are E0001 at the offending token") {
  struct Case {
    const char* name;
    std::string text;
    const char* where;
  };
  const Case cases[] = {
      // A stray character is its own token, reported where it stands.
      {"stray character", "rule R stage early {\n  for e: event a.b @\n  emit a.c\n}\n", "2:20"},
      // A missing closing brace is reported at the end of input.
      {"unclosed rule", "extractor X from app {\n  match /x/\n", "3:1"},
      {"rule without actions", "rule R stage early {\n  for e: event metric.sample\n}\n", "3:1"},
      {"missing stage", "rule R {\n  emit a.b on job\n}\n", "1:8"},
      {"unterminated string", "catalog \"abc version \"1\"\n", "1:23"},
      {"unknown top-level word", "\n\nrules R stage early {}\n", "3:1"},
      {"regex with a raw newline is not a regex", "extractor X from app {\n  match /x\n/\n}\n", "2:9"},
      {"double comma in a field list", "rule R stage early {\n  emit a.b on job { x: 1,, y: 2 }\n}\n", "2:26"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto loaded = compile(c.text);
    CHECK_FALSE(loaded.ok());
    REQUIRE_FALSE(loaded.diagnostics.all().empty());
    const auto& d = loaded.diagnostics.all().front();
    CHECK(d.code == "E0001");
    CHECK(at(d) == c.where);
    CHECK(d.message.rfind("syntax error", 0) == 0);
    // Nothing but syntax errors: semantic analysis does not run on a broken tree.
    for (const auto& x : loaded.diagnostics.all()) CHECK(x.code == "E0001");
  }
}

TEST_CASE("parser: one syntax error per broken declaration, later declarations still parsed") {
  auto loaded = compile(
      "rule A stage early {\n  emit a.b on job { x: }\n}\n"
      "rule B stage early {\n  emit a.c on job { y: 1 }\n}\n"
      "rule C stage early {\n  emit a.d on job { z: 1 + }\n}\n");
  std::vector<std::string> where;
  for (const auto& d : loaded.diagnostics.all()) {
    CHECK(d.code == "E0001");
    where.push_back(at(d));
  }
  CHECK(where == std::vector<std::string>{"2:24", "8:28"});
}

TEST_CASE("parser: comments run to the end of the line, also after code") {
  auto cat = compile_ok(std::string(kErrExtractor) +
                        "rule R stage symptoms { # trailing comment with { braces and \"quotes\n"
                        "  for e: event app.err # another\n"
                        "  symptom t.x { summary: \"# not a comment\" }\n"
                        "}\n");
  CHECK(sexpr(*cat->rules[0].actions[0].summary, *cat) == "\"# not a comment\"");
}

TEST_CASE("parser: CRLF line endings parse like LF") {
  std::string text = std::string(kErrExtractor) + "rule R stage symptoms {\n  for e: event app.err\n  where e.code == 1\n"
                                                  "  symptom t.x { summary: \"x\" }\n}\n";
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto lf = compile_ok(text);
  auto cr = compile_ok(crlf);
  REQUIRE(cr->rules[0].for_query->filter.has_value());
  REQUIRE(lf->rules[0].for_query->filter.has_value());
  CHECK(sexpr(*cr->rules[0].for_query->filter, *cr) == sexpr(*lf->rules[0].for_query->filter, *lf));
  // Positions count lines the same way.
  CHECK(cr->rules[0].where.line == lf->rules[0].where.line);
  CHECK(cr->rules[0].where.col == lf->rules[0].where.col);
}

TEST_CASE("parser: temporal order sits with the comparisons; `not before` is one operator") {
  // The offset binds tighter (additive), `and` looser; `not before` is not `not (before)`.
  CHECK(where_shape("e not before e - 5m and e.fatal").rfind("(and (if ", 0) == 0);
  CHECK(where_shape("not e before e").rfind("(not (if ", 0) == 0);
  CHECK(where_shape("e.ts after e.ts - 1s") == "(> e0.ts (- e0.ts 1s))");
  CHECK(where_shape("e.ts not after e.ts + 1s or e.fatal") == "(or (<= e0.ts (+ e0.ts 1s)) e0.fatal)");
  // `before`/`after` stay usable in `within` and as names of fields.
  auto cat = compile_ok(std::string(kErrExtractor) + "rule T stage symptoms {\n  for e: event app.err\n"
                        "  where exists(o: event app.err within 5s before e) and exists(o2: event app.err within 5s after e)\n"
                        "  symptom t.x at e.ts { before: e.ts, after: e.ts, at: e.ts }\n}\n");
  CHECK(cat->rules[0].actions[0].fields.size() == 3);
  CHECK(codes(compile(std::string(kErrExtractor) + "rule T stage symptoms {\n  for e: event app.err\n"
                      "  where e not before\n  symptom t.x { summary: \"x\" }\n}\n")) == std::vector<std::string>{"E0001"});
}
