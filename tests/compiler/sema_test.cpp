// Semantic analysis tests: every diagnostic code of docs/language.md §7 that
// the compiler can produce (with its position), the typing rules of §6, the
// stage restrictions of §1, regex admission in both engines and the shape of
// the compiled catalog (kinds, field types).
//
// Positions are "line:col" (1-based, col in bytes). Sources built on
// kErrExtractor start their own text at line 8 (the extractor takes 2..7).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

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

// kErrExtractor plus `rest`; `rest` starts at line 8.
std::string with_err(const std::string& rest) { return std::string(kErrExtractor) + rest; }

// A rule over app.err events whose single symptom field is EXPR (line 10).
std::string value_rule(const std::string& expr) {
  return with_err("rule T stage symptoms {\n  for e: event app.err\n  symptom t.x { v: " + expr + " }\n}\n");
}

// The static type EXPR gets.
Type type_of(const std::string& expr) {
  auto cat = compile_ok(value_rule(expr));
  return cat->rules[0].actions[0].fields[0].value.type;
}

// The single diagnostic of `text` must have `code` at `where`.
void expect_only(const std::string& text, const char* code, const char* where) {
  auto loaded = compile(text);
  auto d = only_diagnostic(loaded);
  CHECK(d.code == code);
  CHECK(at(d) == where);
}

// Type errors in `v: EXPR` of value_rule: one E0301 (at line 10).
void expect_type_error(const std::string& expr, const char* where) {
  CAPTURE(expr);
  expect_only(value_rule(expr), "E0301", where);
}

// A rule in STAGE whose body is BODY, after a symptoms rule that creates
// `t.a` symptoms (so symptom queries in BODY have a kind to match).
std::string staged(const std::string& stage, const std::string& body) {
  return with_err("rule Make stage symptoms {\n  for e: event app.err\n  symptom t.a { summary: \"a\" }\n}\n"
                  "rule S stage " + stage + " {\n" + body + "\n}\n");
}

const ir::FieldDef* field(const ir::KindSchema& k, const std::string& name) {
  for (const auto& f : k.fields)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

// ------------------------------------------------------------------ E01xx

TEST_CASE("E0101: duplicate extractor, rule and scenario names") {
  SUBCASE("extractor") {
    auto loaded = compile(with_err("extractor Err from kernel {\n  match /y/\n  emit k.y\n"
                                   "  test { line \"y\" expect k.y }\n  test { line \"n\" expect none }\n}\n"));
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0101");
    CHECK(at(d) == "8:11");  // the second `Err`
    CHECK(d.message.find("t.attr:2") != std::string::npos);  // points back at the first one
  }
  SUBCASE("rule, across two files") {
    auto loaded = compile_sources({{"a.attr", with_err("rule R stage symptoms {\n  for e: event app.err\n"
                                                       "  symptom t.a { summary: \"a\" }\n}\n")},
                                   {"b.attr", "\n\nrule R stage symptoms {\n  for e: event app.err\n"
                                              "  symptom t.b { summary: \"b\" }\n}\n"}});
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0101");
    REQUIRE(d.where.file != nullptr);
    CHECK(d.where.file->path == "b.attr");
    CHECK(at(d) == "3:6");
    CHECK(d.message.find("a.attr:8") != std::string::npos);
  }
  SUBCASE("scenario title") {
    auto loaded = compile(with_err("scenario \"same\" {\n  log \"n1\" app \"OK\"\n  expect status unattributed\n}\n"
                                   "scenario \"same\" {\n  log \"n1\" app \"OK\"\n  expect status unattributed\n}\n"));
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0101");
    CHECK(at(d) == "12:10");
  }
  SUBCASE("binding defined twice in one rule") {
    auto loaded = compile(with_err("rule R stage symptoms {\n  for e: event app.err\n"
                                   "  where exists(e: event app.err on other nodes)\n  symptom t.a { summary: \"a\" }\n}\n"));
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0101");
    CHECK(at(d) == "10:16");
  }
  SUBCASE("a second emit in one extractor") {
    auto loaded = compile("extractor X from app {\n  match /a/\n  emit app.x\n  emit app.y\n"
                          "  test { line \"a\" expect app.x }\n  test { line \"c\" expect none }\n}\n");
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0101");
    CHECK(at(d) == "4:3");
  }
  SUBCASE("a second match is another spelling, not a duplicate (tests/compiler/match_clauses_test.cpp)") {
    compile_ok("extractor X from app {\n  match /a/\n  match /b/\n  emit app.x\n"
               "  test { line \"a\" expect app.x }\n  test { line \"b\" expect app.x }\n  test { line \"c\" expect none }\n}\n");
  }
}

TEST_CASE("E0102: duplicate catalog header, in one file and in one directory") {
  SUBCASE("one file") {
    auto d = only_diagnostic(compile("catalog \"a\" version \"1\"\n\ncatalog \"b\" version \"2\"\n"));
    CHECK(d.code == "E0102");
    CHECK(at(d) == "3:1");
  }
  SUBCASE("two files of one part") {
    auto loaded = compile_sources({{"a.attr", "catalog \"a\" version \"1\"\n"}, {"b.attr", "\ncatalog \"b\" version \"2\"\n"}});
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0102");
    CHECK(d.where.file->path == "b.attr");
    CHECK(at(d) == "2:1");
    CHECK(d.message.find("a.attr:1") != std::string::npos);
  }
}

TEST_CASE("E0103: a field given twice, or a field named like a built-in") {
  SUBCASE("in an extractor's emit") {
    expect_only("extractor X from app {\n  match /(?<a>x)/\n  emit app.x { a: a, a: a }\n"
                "  test { line \"x\" expect app.x }\n  test { line \"y\" expect none }\n}\n",
                "E0103", "3:22");
  }
  SUBCASE("in a symptom") {
    expect_only(with_err("rule R stage symptoms {\n  for e: event app.err\n"
                         "  symptom t.a { n: 1, summary: \"x\", n: 2 }\n}\n"),
                "E0103", "10:37");
  }
  SUBCASE("event field named like a built-in event field") {
    expect_only("extractor X from app {\n  match /(?<h>x)/\n  emit app.x { host: h }\n"
                "  test { line \"x\" expect app.x }\n  test { line \"y\" expect none }\n}\n",
                "E0103", "3:16");
  }
  SUBCASE("symptom field named like a built-in symptom field") {
    expect_only(with_err("rule R stage symptoms {\n  for e: event app.err\n  symptom t.a { count: e.code }\n}\n"),
                "E0103", "10:17");
  }
}

// ------------------------------------------------------------------ E02xx

TEST_CASE("E0201: unknown event or symptom kind") {
  SUBCASE("event kind in `for`") {
    auto d = only_diagnostic(compile(with_err("rule R stage symptoms {\n  for e: event app.errr\n"
                                              "  symptom t.a { summary: \"a\" }\n}\n")));
    CHECK(d.code == "E0201");
    CHECK(at(d) == "9:16");
    CHECK(d.where.end_col == 24);  // the whole kind, for the caret
    CHECK(d.message == "unknown event kind 'app.errr'");
  }
  SUBCASE("symptom kind in a query aggregate") {
    auto d = only_diagnostic(compile(with_err("rule R stage symptoms {\n  for e: event app.err\n"
                                              "  where none(s: symptom t.nothing)\n  symptom t.a { summary: \"a\" }\n}\n")));
    CHECK(d.code == "E0201");
    CHECK(at(d) == "10:25");
    CHECK(d.message == "unknown symptom kind 't.nothing'");
  }
  SUBCASE("an event kind used as a symptom kind") {
    auto d = only_diagnostic(compile(with_err("rule R stage final {\n  for s: symptom app.err\n"
                                              "  demote s because \"x\"\n}\n")));
    CHECK(d.code == "E0201");
    CHECK(at(d) == "9:18");
  }
}

TEST_CASE("E0202: unknown name, function or binding") {
  SUBCASE("name") {
    auto d = only_diagnostic(compile(with_err("rule R stage symptoms {\n  for e: event app.err\n"
                                              "  where e.code == limit\n  symptom t.a { summary: \"a\" }\n}\n")));
    CHECK(d.code == "E0202");
    CHECK(at(d) == "10:19");
    CHECK(d.message == "unknown name 'limit'");
  }
  SUBCASE("function") {
    auto d = only_diagnostic(compile(value_rule("parse_int(e.dev)")));
    CHECK(d.code == "E0202");
    CHECK(at(d) == "10:20");
    CHECK(d.message == "unknown function 'parse_int'");
  }
  SUBCASE("field of something that is not a binding") {
    auto d = only_diagnostic(compile(value_rule("x.node")));
    CHECK(d.code == "E0202");
    CHECK(at(d) == "10:20");
  }
  SUBCASE("binding in a demote") {
    auto d = only_diagnostic(compile(staged("final", "  for s: symptom t.a\n  demote q because \"x\"")));
    CHECK(d.code == "E0202");
    CHECK(at(d) == "14:10");
  }
  SUBCASE("interpolation of an unknown name") {
    auto d = only_diagnostic(compile(value_rule("\"on {nodee}\"")));
    CHECK(d.code == "E0202");
    CHECK(d.where.line == 10);
  }
}

TEST_CASE("E0203: a kind pattern that matches nothing") {
  SUBCASE("event family") {
    auto d = only_diagnostic(compile(with_err("rule R stage symptoms {\n  for e: event nccl.*\n"
                                              "  symptom t.a { summary: \"a\" }\n}\n")));
    CHECK(d.code == "E0203");
    CHECK(at(d) == "9:16");
  }
  SUBCASE("symptom family") {
    auto d = only_diagnostic(compile(staged("final", "  for s: symptom gpu.*\n  demote s because \"x\"")));
    CHECK(d.code == "E0203");
    CHECK(at(d) == "13:18");
  }
  SUBCASE("`*` over symptoms when the catalog creates none") {
    auto d = only_diagnostic(compile(with_err("rule R stage final {\n  for s: symptom *\n  demote s because \"x\"\n}\n")));
    CHECK(d.code == "E0203");
    CHECK(at(d) == "9:18");
  }
  SUBCASE("scenario expectation") {
    auto d = only_diagnostic(compile(staged("final", "  for s: symptom t.a\n  demote s because \"x\"") +
                                     "scenario \"s\" {\n  log \"n\" app \"OK\"\n  expect symptom gpu.* active\n}\n"));
    CHECK(d.code == "E0203");
    CHECK(at(d) == "18:3");
  }
}

TEST_CASE("E0204: unknown field") {
  SUBCASE("of an event") {
    auto d = only_diagnostic(compile(value_rule("e.cod")));
    CHECK(d.code == "E0204");
    CHECK(at(d) == "10:22");  // under the field name, not the whole `e.cod`
    CHECK(d.message == "'app.err' has no field 'cod'");
    CHECK(d.help == "did you mean 'code'?");
  }
  SUBCASE("of a symptom") {
    auto d = only_diagnostic(compile(staged("final", "  for s: symptom t.a\n  set s.priority = s.severity")));
    CHECK(d.code == "E0204");
    CHECK(at(d) == "14:22");
  }
  SUBCASE("of terminal, workload and outcome") {
    CHECK(only_diagnostic(compile(value_rule("terminal.code"))).code == "E0204");
    CHECK(only_diagnostic(compile(value_rule("workload.size"))).code == "E0204");
    auto d = only_diagnostic(compile(with_err("rule P stage post_outcome {\n  where outcome.result == \"x\"\n"
                                              "  set outcome unattributed because \"x\"\n}\n")));
    CHECK(d.code == "E0204");
    CHECK(at(d) == "9:17");
    CHECK(d.help.empty());  // nothing like "result" among status, domain, sub_domain, culprits
  }
  SUBCASE("a field missing from one kind of a family") {
    auto loaded = compile(R"(
extractor A from app {
  match /a(?<x>\d)/
  emit nccl.a { x: x, only_a: x }
  test { line "a1" expect nccl.a }
  test { line "b" expect none }
}
extractor B from app {
  match /b(?<x>\d)/
  emit nccl.b { x: x }
  test { line "b1" expect nccl.b }
  test { line "a" expect none }
}
rule R stage symptoms {
  for e: event nccl.*
  symptom t.a { x: e.x, y: e.only_a }
}
)");
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0204");
    CHECK(at(d) == "16:30");
    CHECK(d.message.find("nccl.b") != std::string::npos);
  }
}

TEST_CASE("E0205: unknown stage, and `extract` is not a rule stage") {
  auto d = only_diagnostic(compile(with_err("rule R stage symptom {\n  for e: event app.err\n"
                                            "  symptom t.a { summary: \"a\" }\n}\n")));
  CHECK(d.code == "E0205");
  CHECK(at(d) == "8:14");
  CHECK(d.where.end_col == 21);
  // The extract stage exists, but only extractors run in it (E0601).
  auto x = only_diagnostic(compile(with_err("rule R stage extract {\n  for e: event app.err\n"
                                            "  emit app.y { c: e.code }\n}\n")));
  CHECK(x.code == "E0601");
  CHECK(at(x) == "8:14");
}

TEST_CASE("E0206: unknown domain, status or symptom state") {
  SUBCASE("classify with an unknown domain") {
    auto d = only_diagnostic(compile(staged("outcome", "  for s: symptom t.a\n  classify s as firmware \"gpu.x\"")));
    CHECK(d.code == "E0206");
    CHECK(at(d) == "14:17");
  }
  SUBCASE("classify with an empty sub_domain") {
    auto d = only_diagnostic(compile(staged("outcome", "  for s: symptom t.a\n  classify s as hardware \"\"")));
    CHECK(d.code == "E0206");
  }
  SUBCASE("set outcome with an unknown status") {
    auto d = only_diagnostic(compile(with_err("rule P stage post_outcome {\n  set outcome failed because \"x\"\n}\n")));
    CHECK(d.code == "E0206");
    CHECK(at(d) == "9:3");
  }
  SUBCASE("set outcome attributed needs a domain") {
    auto d = only_diagnostic(compile(with_err("rule P stage post_outcome {\n  set outcome attributed because \"x\"\n}\n")));
    CHECK(d.code == "E0206");
  }
  SUBCASE("set outcome with an unknown domain") {
    auto d = only_diagnostic(compile(with_err("rule P stage post_outcome {\n"
                                              "  set outcome attributed cosmic \"ray\" because \"x\"\n}\n")));
    CHECK(d.code == "E0206");
    CHECK(at(d) == "9:26");
  }
  SUBCASE("scenario expectations") {
    auto loaded = compile(staged("outcome", "  for s: symptom t.a\n  classify s as hardware \"t.a\"") +
                          "scenario \"s\" {\n  log \"n\" app \"OK\"\n  expect status broken\n  expect domain cosmic\n"
                          "  expect symptom t.a gone\n}\n");
    CHECK(codes(loaded) == std::vector<std::string>{"E0206", "E0206", "E0206"});
    std::vector<std::string> where;
    for (const auto& d : loaded.diagnostics.all()) where.push_back(at(d));
    // Under the unknown word, not the whole line.
    CHECK(where == std::vector<std::string>{"18:17", "19:17", "20:22"});
  }
}

// ------------------------------------------------------------------ E03xx

TEST_CASE("E0301: operators reject mismatched operand types") {
  expect_type_error("e.dev + 1", "10:20");
  expect_type_error("e.code - e.dev", "10:20");
  expect_type_error("e.dev * 2", "10:20");
  expect_type_error("e.code % 1.5", "10:20");
  expect_type_error("e.code << 1.0", "10:20");
  expect_type_error("e.fatal & 1", "10:20");
  expect_type_error("e.ts + e.ts", "10:20");
  expect_type_error("e.ts * 2", "10:20");
  expect_type_error("30s + 1", "10:20");
  expect_type_error("e.code == e.dev", "10:20");
  expect_type_error("e.fatal < true", "10:20");
  expect_type_error("e.ts > 5s", "10:20");
  expect_type_error("e.code and e.fatal", "10:20");
  expect_type_error("not e.code", "10:20");
  expect_type_error("-e.dev", "10:20");
  expect_type_error("e.code matches /1/", "10:20");
  // An `in` list element of another type is reported at that element.
  expect_type_error("e.code in [1, \"2\"]", "10:34");
  // Reading a binding or a record as a value.
  expect_type_error("e", "10:20");
  expect_type_error("terminal", "10:20");
}

TEST_CASE("E0301: a comparison with the null literal is rejected (use is null)") {
  auto d = only_diagnostic(compile(value_rule("e.dev == null")));
  CHECK(d.code == "E0301");
  CHECK(at(d) == "10:20");
  CHECK(d.message.find("is null") != std::string::npos);
  CHECK(only_diagnostic(compile(value_rule("null != e.code"))).code == "E0301");
}

TEST_CASE("E0301: function arguments are typed") {
  expect_type_error("lower(e.code)", "10:26");
  expect_type_error("len(1)", "10:24");
  expect_type_error("contains(e.dev, 1)", "10:36");
  expect_type_error("seconds(e.code)", "10:28");
  expect_type_error("hex(1.5)", "10:24");
  expect_type_error("int(e.fatal)", "10:24");
  expect_type_error("coalesce(e.code, e.dev)", "10:37");
  // The unit of duration() must be a literal unit name.
  expect_type_error("duration(1, \"days\")", "10:32");
  expect_type_error("duration(1, e.dev)", "10:32");
  // covered() takes a source name, then a node string.
  expect_type_error("covered(kernel, e.code)", "10:36");
  expect_type_error("covered(1, e.node)", "10:28");
  expect_type_error("is_node(e.code)", "10:28");
}

TEST_CASE("E0301: conditions, priorities, summaries and targets have fixed types") {
  SUBCASE("where must be bool") {
    expect_only(with_err("rule R stage symptoms {\n  for e: event app.err\n  where e.fatal\n  where e.code\n"
                         "  symptom t.a { summary: \"a\" }\n}\n"),
                "E0301", "11:9");
  }
  SUBCASE("query filter must be bool") {
    expect_only(with_err("rule R stage symptoms {\n  for e: event app.err where e.dev\n"
                         "  symptom t.a { summary: \"a\" }\n}\n"),
                "E0301", "9:30");
  }
  SUBCASE("priority must be int") {
    expect_only(with_err("rule R stage symptoms {\n  for e: event app.err\n  symptom t.a priority e.dev { summary: \"a\" }\n}\n"),
                "E0301", "10:24");
    expect_only(staged("final", "  for s: symptom t.a\n  set s.priority = 1.5"), "E0301", "14:20");
  }
  SUBCASE("summary must be a string") {
    expect_only(with_err("rule R stage symptoms {\n  for e: event app.err\n  symptom t.a { summary: e.code }\n}\n"),
                "E0301", "10:26");
  }
  SUBCASE("`on` needs a node name") {
    expect_only(with_err("rule R stage symptoms {\n  for e: event app.err\n  symptom t.a on e.code { summary: \"a\" }\n}\n"),
                "E0301", "10:18");
  }
}

TEST_CASE("E0301: extractor tests expect literals of the field's type") {
  SUBCASE("wrong literal type") {
    expect_only("extractor X from app {\n  match /n=(?<n>\\d+)/\n  emit app.n { n: int(n) }\n"
                "  test { line \"n=1\" expect app.n { n: \"1\" } }\n  test { line \"x\" expect none }\n}\n",
                "E0301", "4:39");
  }
  SUBCASE("not a literal") {
    expect_only("extractor X from app {\n  match /n=(?<n>\\d+)/\n  emit app.n { n: int(n) }\n"
                "  test { line \"n=1\" expect app.n { n: 1 + 0 } }\n  test { line \"x\" expect none }\n}\n",
                "E0301", "4:39");
  }
  SUBCASE("an int literal is fine for a float field, a negative literal too") {
    compile_ok("extractor X from app {\n  match /v=(?<v>\\S+)/\n  emit app.v { v: float(v) }\n"
               "  test { line \"v=-2\" expect app.v { v: -2 } }\n  test { line \"x\" expect none }\n}\n");
  }
}

TEST_CASE("E0301: scenario window bounds must be RFC 3339") {
  auto loaded = compile(staged("final", "  for s: symptom t.a\n  demote s because \"x\"") +
                        "scenario \"s\" {\n  window \"2026-01-01 10:00\" to \"2026-01-01T11:00:00Z\"\n"
                        "  log \"n\" app \"OK\"\n  expect status unattributed\n}\n");
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0301");
  CHECK(at(d) == "17:3");
}

TEST_CASE("E0302: wrong number of arguments") {
  SUBCASE("fixed arity") {
    auto d = only_diagnostic(compile(value_rule("lower(e.dev, e.dev)")));
    CHECK(d.code == "E0302");
    CHECK(at(d) == "10:20");
    CHECK(d.message == "'lower' takes 1 argument");
  }
  SUBCASE("no arguments") {
    CHECK(only_diagnostic(compile(value_rule("str()"))).code == "E0302");
    CHECK(only_diagnostic(compile(value_rule("coalesce()"))).code == "E0302");
  }
  SUBCASE("two-argument functions") {
    CHECK(only_diagnostic(compile(value_rule("duration(5)"))).code == "E0302");
    CHECK(only_diagnostic(compile(value_rule("starts_with(e.dev)"))).code == "E0302");
  }
  SUBCASE("group aggregates") {
    auto loaded = compile(with_err("rule R stage symptoms {\n  for e: event app.err\n  group by e.node\n"
                                   "  symptom t.a { n: count(e.code), d: distinct() }\n}\n"));
    CHECK(codes(loaded) == std::vector<std::string>{"E0302", "E0302"});
    CHECK(at(loaded.diagnostics.all()[0]) == "11:20");
    CHECK(at(loaded.diagnostics.all()[1]) == "11:38");
  }
}

TEST_CASE("E0303: one field typed differently by two emitters") {
  SUBCASE("two extractors") {
    auto loaded = compile(R"(
extractor A from app {
  match /a(?<x>\d)/
  emit app.v { x: int(x) }
  test { line "a1" expect app.v }
  test { line "b" expect none }
}
extractor B from app {
  match /b(?<x>\d)/
  emit app.v { x: x }
  test { line "b1" expect app.v }
  test { line "a" expect none }
}
)");
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0303");
    CHECK(at(d) == "10:16");
    CHECK(d.message.find("string") != std::string::npos);
    CHECK(d.message.find("int") != std::string::npos);
  }
  SUBCASE("two symptom creators") {
    auto loaded = compile(with_err("rule A stage symptoms {\n  for e: event app.err\n  symptom t.a { v: e.code }\n}\n"
                                   "rule B stage symptoms {\n  for e: event app.err\n  symptom t.a { v: e.dev }\n}\n"));
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0303");
    CHECK(at(d) == "14:17");
  }
  SUBCASE("a field read through a family with different types") {
    // Each kind alone is consistent; only reading `x` through `nccl.*` is ambiguous.
    auto loaded = compile(R"(
extractor A from app {
  match /a(?<x>\d)/
  emit nccl.a { x: int(x) }
  test { line "a1" expect nccl.a }
  test { line "b" expect none }
}
extractor B from app {
  match /b(?<x>\d)/
  emit nccl.b { x: x }
  test { line "b1" expect nccl.b }
  test { line "a" expect none }
}
rule R stage symptoms {
  for e: event nccl.*
  symptom t.a { v: e.x }
}
)");
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0303");
    CHECK(at(d) == "16:20");
  }
}

TEST_CASE("E0304: group aggregates only under group by") {
  SUBCASE("in a rule without group by") {
    auto d = only_diagnostic(compile(value_rule("count()")));
    CHECK(d.code == "E0304");
    CHECK(at(d) == "10:20");
    for (const char* agg : {"values(e.dev)", "distinct(e.dev)", "first_ts()", "last_ts()"}) {
      CAPTURE(agg);
      CHECK(only_diagnostic(compile(value_rule(agg))).code == "E0304");
    }
  }
  SUBCASE("in a where of a grouped rule (aggregates belong to actions)") {
    auto loaded = compile(with_err("rule R stage symptoms {\n  for e: event app.err\n  where e.fatal\n"
                                   "  where count() > 2\n  group by e.node\n  symptom t.a { n: count() }\n}\n"));
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0304");
    CHECK(at(d) == "11:9");
  }
  SUBCASE("group by without a for binding") {
    auto loaded = compile("rule R stage aggregate {\n  group by workload.id\n  symptom t.a on job { summary: \"x\" }\n}\n");
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0304");
    CHECK(at(d) == "2:3");
  }
  SUBCASE("inside a query filter of a grouped rule") {
    auto loaded = compile(with_err("rule R stage symptoms {\n  for e: event app.err\n  group by e.node\n"
                                   "  symptom t.a { n: count(y: event app.err where count() > 1) }\n}\n"));
    auto d = only_diagnostic(loaded);
    CHECK(d.code == "E0304");
    CHECK(at(d) == "11:49");
  }
  SUBCASE("allowed in the actions of a grouped rule") {
    compile_ok(with_err("rule R stage symptoms {\n  for e: event app.err\n  group by e.node within 1m\n"
                        "  symptom t.a key str(first_ts()) { n: count(), v: values(e.dev), d: distinct(e.code), "
                        "summary: \"{e.node}: {e.dev}\" }\n}\n"));
  }
}

// ------------------------------------------------------------------ E04xx

TEST_CASE("E0401/E0402: regexes must compile in both Hyperscan and RE2") {
  auto extractor_with = [](const std::string& re) {
    return "extractor X from app {\n  match /" + re + "/\n  emit app.x\n  test { line \"a\" expect app.x }\n"
           "  test { line \"b\" expect none }\n}\n";
  };
  // RE2 runs first and refuses in microseconds; a regex it refuses is not
  // handed to Hyperscan, whose compile can take far longer (issue 12). The
  // error sits under the fragment RE2 names.
  SUBCASE("back-reference: RE2 refuses it at its offset, Hyperscan is not asked") {
    auto d = only_diagnostic(compile(extractor_with("(a)\\1")));
    CHECK(d.code == "E0402");
    CHECK(at(d) == "2:13");  // under `\1`
    CHECK(d.where.end_col == 15);
    CHECK(d.message.find("RE2") != std::string::npos);
    CHECK(d.message.find("Hyperscan") == std::string::npos);
    CHECK(d.help.find("back-references") != std::string::npos);
  }
  SUBCASE("look-ahead: RE2 refuses it, one error under the group") {
    auto d = only_diagnostic(compile(extractor_with("a(?=x)")));
    CHECK(d.code == "E0402");
    CHECK(at(d) == "2:11");
    CHECK(d.help.find("look-around") != std::string::npos);
  }
  SUBCASE("an escaped slash before the mistake shifts the caret by its backslash") {
    auto d = only_diagnostic(compile(extractor_with("a\\/b(?!c)")));
    CHECK(d.code == "E0402");
    CHECK(at(d) == "2:14");
  }
  SUBCASE("rejected by Hyperscan only: a pattern that matches the empty string") {
    auto d = only_diagnostic(compile(extractor_with("x*")));
    CHECK(d.code == "E0401");
    CHECK(at(d) == "2:9");
    CHECK(d.where.end_col == 13);  // the whole /x*/ token
  }
  SUBCASE("rejected by RE2 only: \\Z, which Hyperscan knows") {
    auto d = only_diagnostic(compile(extractor_with("a\\Z")));
    CHECK(d.code == "E0402");
    CHECK(d.message.find("RE2") != std::string::npos);
  }
  SUBCASE("look-behind") {
    auto c = codes(compile(extractor_with("(?<=a)b")));
    CHECK(c == std::vector<std::string>{"E0402"});
  }
  SUBCASE("`matches` in an expression is checked with RE2") {
    auto d = only_diagnostic(compile(value_rule("e.dev matches /(?=a)/")));
    CHECK(d.code == "E0402");
    CHECK(at(d) == "10:35");  // under `(?=` inside the regex
  }
  SUBCASE("both flags are accepted") {
    compile_ok(extractor_with("A.B") + "\n");
    auto cat = compile_ok("extractor X from app {\n  match /a.b/is\n  emit app.x\n  test { line \"A\\nB\" expect app.x }\n"
                          "  test { line \"b\" expect none }\n}\n");
    CHECK(cat->extractors[0].caseless);
    CHECK(cat->extractors[0].dotall);
  }
}

TEST_CASE("E0403: emit names a capture the regex does not define") {
  auto loaded = compile("extractor X from app {\n  match /(?<dev>\\w+) (\\d+)/\n  emit app.x { dev: dev, code: code }\n"
                        "  test { line \"a 1\" expect app.x }\n  test { line \"\" expect none }\n}\n");
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0403");
  CHECK(at(d) == "3:32");
  CHECK(d.message.find("'code'") != std::string::npos);
}

TEST_CASE("named captures: (?<name>...) and (?P<name>...) both define capture names") {
  auto cat = compile_ok("extractor X from app {\n  match /(?<a>x)(?P<b>y)(z)(?:w)(?<c>v)?/\n"
                        "  emit app.x { a: a, b: b, c: c }\n"
                        "  test { line \"xyzw\" expect app.x { a: \"x\", b: \"y\" } }\n  test { line \"\" expect none }\n}\n");
  const auto& x = cat->extractors[0];
  CHECK(x.capture_names == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(x.re2_pattern == "(?P<a>x)(?P<b>y)(z)(?:w)(?P<c>v)?");
  // Captures are strings.
  const auto& k = cat->event_kinds[static_cast<size_t>(x.kind)];
  for (const char* f : {"a", "b", "c"}) {
    CAPTURE(f);
    REQUIRE(field(k, f) != nullptr);
    CHECK(field(k, f)->type == Type::String);
  }
  REQUIRE(x.fields.size() == 3);
  CHECK(sexpr(x.fields[2].value, *cat) == "$3");
}

TEST_CASE("E0404: extractor without match or emit") {
  auto a = only_diagnostic(compile("extractor NoMatch from app {\n  emit app.x\n"
                                   "  test { line \"a\" expect app.x }\n  test { line \"b\" expect none }\n}\n"));
  CHECK(a.code == "E0404");
  CHECK(at(a) == "1:11");
  auto b = only_diagnostic(compile("extractor NoEmit from app {\n  match /a/\n  test { line \"b\" expect none }\n}\n"));
  CHECK(b.code == "E0404");
  CHECK(at(b) == "1:11");
}

// ------------------------------------------------------------------ E05xx

TEST_CASE("E0501: both test polarities are required") {
  const char* head = "extractor X from app {\n  match /a/\n  emit app.x\n";
  SUBCASE("no tests") {
    auto d = only_diagnostic(compile(std::string(head) + "}\n"));
    CHECK(d.code == "E0501");
    CHECK(at(d) == "1:11");
    CHECK(d.message.find("no tests") != std::string::npos);
  }
  SUBCASE("only a must-match test") {
    auto d = only_diagnostic(compile(std::string(head) + "  test { line \"a\" expect app.x }\n}\n"));
    CHECK(d.code == "E0501");
    CHECK(d.message.find("no must-not-match test") != std::string::npos);
  }
  SUBCASE("only a must-not-match test") {
    auto d = only_diagnostic(compile(std::string(head) + "  test { line \"b\" expect none }\n}\n"));
    CHECK(d.code == "E0501");
    CHECK(d.message.find("no must-match test") != std::string::npos);
  }
}

TEST_CASE("E0502: a test expects a field the extractor does not emit") {
  auto d = only_diagnostic(compile("extractor X from app {\n  match /(?<a>a)/\n  emit app.x { a: a }\n"
                                   "  test { line \"a\" expect app.x { a: \"a\", b: \"b\" } }\n"
                                   "  test { line \"b\" expect none }\n}\n"));
  CHECK(d.code == "E0502");
  CHECK(at(d) == "4:42");
}

TEST_CASE("E0503: a scenario without expect") {
  auto d = only_diagnostic(compile(with_err("scenario \"nothing checked\" {\n  log \"n1\" app \"ERR 1 dev=a\"\n}\n")));
  CHECK(d.code == "E0503");
  CHECK(at(d) == "8:10");
}

TEST_CASE("E0504: a test expects another kind than its extractor emits") {
  auto d = only_diagnostic(compile("extractor X from app {\n  match /a/\n  emit app.x\n"
                                   "  test { line \"a\" expect app.y }\n  test { line \"b\" expect none }\n}\n"));
  CHECK(d.code == "E0504");
  CHECK(at(d) == "4:26");
}

// ------------------------------------------------------------------ E06xx

TEST_CASE("E0601: actions are restricted by stage (docs/language.md §1)") {
  // The allowed stages per action, as the documentation states them.
  const char* stages[] = {"early", "symptoms", "scrub", "aggregate", "final", "outcome", "post_outcome"};
  struct ActionCase {
    const char* name;
    const char* body;  // bound to `s: symptom t.a` or `e: event app.err`
    bool on_symptom;
    std::vector<std::string> allowed;
  };
  const ActionCase actions[] = {
      {"emit", "  emit t.derived { n: 1 }", false, {"early"}},
      {"symptom", "  symptom t.b { summary: \"b\" }", false, {"symptoms", "aggregate"}},
      {"scrub", "  scrub s because \"noise\"", true, {"scrub", "final"}},
      {"demote", "  demote s because \"explained\"", true, {"aggregate", "final"}},
      {"classify", "  classify s as hardware \"t.a\"", true, {"outcome"}},
      {"set outcome", "  set outcome unattributed because \"x\"", false, {"post_outcome"}},
  };
  for (const auto& a : actions) {
    for (const char* stage : stages) {
      CAPTURE(a.name);
      CAPTURE(stage);
      std::string binding = a.on_symptom ? "  for s: symptom t.a\n" : "  for e: event app.err\n";
      auto loaded = compile(staged(stage, binding + a.body));
      bool allowed = std::find(a.allowed.begin(), a.allowed.end(), stage) != a.allowed.end();
      if (allowed) {
        INFO(loaded.diagnostics.render());
        CHECK(loaded.ok());
      } else {
        auto d = only_diagnostic(loaded);
        CHECK(d.code == "E0601");
        CHECK(at(d) == "14:3");  // the whole action
        CHECK(d.message.find(stage) != std::string::npos);
      }
    }
  }
  // set priority: allowed in final and aggregate.
  for (const char* stage : {"final", "aggregate"}) {
    CAPTURE(stage);
    CHECK(compile(staged(stage, "  for s: symptom t.a\n  set s.priority = 3")).ok());
  }
  for (const char* stage : {"early", "outcome", "post_outcome"}) {
    CAPTURE(stage);
    auto d = only_diagnostic(compile(staged(stage, "  for s: symptom t.a\n  set s.priority = 3")));
    CHECK(d.code == "E0601");
  }
}

// docs/language.md §1: `set priority` is allowed in symptoms, scrub, aggregate
// and final (a symptoms rule may adjust what an earlier one created).
TEST_CASE("set priority compiles in symptoms, scrub, aggregate and final") {
  for (const char* stage : {"symptoms", "scrub", "aggregate", "final"}) {
    CAPTURE(stage);
    auto loaded = compile(staged(stage, "  for s: symptom t.a\n  set s.priority = 3"));
    CHECK(loaded.ok());
  }
}

TEST_CASE("E0601: outcome is only known in post_outcome - no queries in an extractor's emit") {
  auto d = only_diagnostic(compile(staged("outcome", "  for s: symptom t.a\n  where outcome.status == \"x\"\n"
                                                     "  classify s as hardware \"t.a\"")));
  CHECK(d.code == "E0601");
  CHECK(at(d) == "14:9");
  auto q = only_diagnostic(compile("extractor X from app {\n  match /a/\n  emit app.x { n: count(y: event app.x) }\n"
                                   "  test { line \"a\" expect app.x }\n  test { line \"b\" expect none }\n}\n"));
  CHECK(q.code == "E0601");
  CHECK(at(q) == "3:19");
}

TEST_CASE("E0602: within anchors and node relations need bindings") {
  SUBCASE("within anchor that is not a binding") {
    auto d = only_diagnostic(compile(with_err("rule R stage symptoms {\n  for e: event app.err\n"
                                              "  where exists(y: event app.err within 30s before x)\n"
                                              "  symptom t.a { summary: \"a\" }\n}\n")));
    CHECK(d.code == "E0602");
    CHECK(at(d) == "10:51");
  }
  SUBCASE("on same node without a for binding") {
    auto d = only_diagnostic(compile(with_err("rule R stage aggregate {\n  where exists(y: event app.err on same node)\n"
                                              "  symptom t.a on job { summary: \"a\" }\n}\n")));
    CHECK(d.code == "E0602");
    CHECK(at(d) == "9:19");
  }
  SUBCASE("a symptom with no binding and no target") {
    auto d = only_diagnostic(compile("rule R stage aggregate {\n  symptom t.a { summary: \"a\" }\n}\n"));
    CHECK(d.code == "E0602");
    CHECK(at(d) == "2:11");
  }
  SUBCASE("the anchor may be a query binding of an enclosing query") {
    compile_ok(with_err("rule R stage symptoms {\n  for e: event app.err\n"
                        "  where exists(y: event app.err on other nodes where exists(z: event app.err within 5s around y))\n"
                        "  symptom t.a { summary: \"a\" }\n}\n"));
  }
}

TEST_CASE("E0603: only symptom bindings can be demoted, scrubbed, re-prioritized or classified") {
  SUBCASE("demote an event binding") {
    auto d = only_diagnostic(compile(staged("final", "  for e: event app.err\n  demote e because \"x\"")));
    CHECK(d.code == "E0603");
    CHECK(at(d) == "14:10");
  }
  SUBCASE("scrub over an event query") {
    auto d = only_diagnostic(compile(staged("final", "  for s: symptom t.a\n  scrub y: event app.err because \"x\"")));
    CHECK(d.code == "E0603");
    CHECK(at(d) == "14:12");
  }
  SUBCASE("set priority of an event binding") {
    auto d = only_diagnostic(compile(staged("final", "  for e: event app.err\n  set e.priority = 1")));
    CHECK(d.code == "E0603");
    CHECK(at(d) == "14:7");
  }
  SUBCASE("classify an event binding") {
    auto d = only_diagnostic(compile(staged("outcome", "  for e: event app.err\n  classify e as hardware \"x\"")));
    CHECK(d.code == "E0603");
    CHECK(at(d) == "14:12");
  }
}

// ------------------------------------------------------------------ typing

TEST_CASE("types: arithmetic over time, duration and numbers (docs/language.md §6)") {
  CHECK(type_of("e.code + 1") == Type::Int);
  CHECK(type_of("e.code * 2 - 3 % 2") == Type::Int);
  CHECK(type_of("e.code + 1.5") == Type::Float);
  CHECK(type_of("1.5 * e.code") == Type::Float);
  CHECK(type_of("e.ts - e.ts") == Type::Duration);
  CHECK(type_of("e.ts + 30s") == Type::Time);
  CHECK(type_of("30s + e.ts") == Type::Time);
  CHECK(type_of("e.ts - 1m") == Type::Time);
  CHECK(type_of("1m - 30s") == Type::Duration);
  CHECK(type_of("30s * 2") == Type::Duration);
  CHECK(type_of("2 * 30s") == Type::Duration);
  CHECK(type_of("-30s") == Type::Duration);
  CHECK(type_of("e.dev + \"x\"") == Type::String);
  CHECK(type_of("e.code << 2 | 1") == Type::Int);
  CHECK(type_of("e.ts > e.ts - 5s") == Type::Bool);
  CHECK(type_of("e.code < 1.5") == Type::Bool);
  CHECK(type_of("e.dev < \"b\"") == Type::Bool);
  CHECK(type_of("e.code in [1, 2.5]") == Type::Bool);
}

TEST_CASE("types: built-in fields and functions") {
  CHECK(type_of("e.node") == Type::String);
  CHECK(type_of("e.host") == Type::String);
  CHECK(type_of("e.source") == Type::String);
  CHECK(type_of("e.file") == Type::String);
  CHECK(type_of("e.line") == Type::Int);
  CHECK(type_of("e.offset") == Type::Int);
  CHECK(type_of("e.ts") == Type::Time);
  CHECK(type_of("e.text") == Type::String);
  CHECK(type_of("e.kind") == Type::String);
  CHECK(type_of("int(e.dev)") == Type::Int);
  CHECK(type_of("hex(e.dev)") == Type::Int);
  CHECK(type_of("float(e.dev)") == Type::Float);
  CHECK(type_of("duration(e.code, \"ms\")") == Type::Duration);
  CHECK(type_of("seconds(5s)") == Type::Float);
  CHECK(type_of("len(e.dev)") == Type::Int);
  CHECK(type_of("upper(e.dev)") == Type::String);
  CHECK(type_of("starts_with(e.dev, \"a\")") == Type::Bool);
  CHECK(type_of("str(e.ts)") == Type::String);
  CHECK(type_of("coalesce(int(e.dev), e.code)") == Type::Int);
  CHECK(type_of("covered(kernel, e.node)") == Type::Bool);
  CHECK(type_of("coverage(kernel)") == Type::Float);
  CHECK(type_of("is_node(e.dev)") == Type::Bool);
  CHECK(type_of("terminal.state") == Type::String);
  CHECK(type_of("terminal.exit_code") == Type::Int);
  CHECK(type_of("workload.nodes") == Type::Int);
  CHECK(type_of("workload.id") == Type::String);
  CHECK(type_of("count(y: event app.err)") == Type::Int);
  CHECK(type_of("nodes(y: event app.err)") == Type::Int);
  CHECK(type_of("exists(y: event app.err)") == Type::Bool);
  CHECK(type_of("max(y: event app.err, y.ts)") == Type::Time);
  CHECK(type_of("min(y: event app.err, y.dev)") == Type::String);
}

TEST_CASE("types: symptom built-ins and fields are visible to later stages") {
  auto cat = compile_ok(with_err(R"(
rule Make stage symptoms {
  for e: event app.err
  symptom t.a key e.dev { code: e.code, when: e.ts, gap: e.ts - e.ts, ratio: 1.5, hit: e.fatal }
}
rule Read stage final {
  for s: symptom t.a
  where s.code > 1 and s.when > s.first and s.gap < 1s and s.ratio > 1.0 and s.hit
  where s.id != "" and s.kind == "t.a" and s.node != "" and s.key == "a" and s.count > 1
  where s.last > s.first and s.priority > 0 and s.summary != ""
  set s.priority = s.priority + 1
}
)"));
  const auto& k = cat->symptom_kinds[static_cast<size_t>(cat->symptom_kind_id("t.a"))];
  CHECK(field(k, "code")->type == Type::Int);
  CHECK(field(k, "when")->type == Type::Time);
  CHECK(field(k, "gap")->type == Type::Duration);
  CHECK(field(k, "ratio")->type == Type::Float);
  CHECK(field(k, "hit")->type == Type::Bool);
}

TEST_CASE("temporal order: Y [not] before|after X [± D] lowers onto own time, line order and time") {
  auto order_rule = [](const std::string& cond) {
    return with_err("rule Make stage symptoms {\n  for e: event app.err\n  symptom t.a { summary: \"a\" }\n}\n"
                    "rule S stage final {\n  for x: symptom t.a\n  demote y: symptom t.a where " + cond +
                    " because \"r\"\n}\n");
  };
  auto filter = [&](const std::string& cond) {
    auto cat = compile_ok(order_rule(cond));
    return sexpr(*cat->rules[1].actions[0].query->filter, *cat);
  };
  // Two items with an offset: own times first, then line order in one file, then times.
  CHECK(filter("y not before x - 5m") ==
        "(if (and (is-not-null s1.own_first) (is-not-null s0.own_first)) (>= s1.own_first (- s0.own_first 5m)) "
        "(if (== s1.place s0.place) (if (and (is-not-null s1.place_boot) (is-not-null s0.place_boot)) "
        "(>= s1.place_boot (- s0.place_boot 5m)) (>= s1.place_line s0.place_line)) (>= s1.first (- s0.first 5m))))");
  // Without an offset, line order in one file comes first (exact even at coarse stamps).
  CHECK(filter("y after x") ==
        "(if (== s1.place s0.place) (> s1.place_line s0.place_line) "
        "(if (and (is-not-null s1.own_first) (is-not-null s0.own_first)) (> s1.own_first s0.own_first) "
        "(> s1.first s0.first)))");
  CHECK(filter("y before x").find("(< s1.place_line s0.place_line)") != std::string::npos);
  CHECK(filter("y not after x + 1m").find("(<= s1.own_first (+ s0.own_first 1m))") != std::string::npos);
  // A time expression on either side: the item's own time, else its time.
  CHECK(filter("y after workload.end + 2m") == "(> (coalesce s1.own_first s1.first) (+ workload.end 2m))");
  CHECK(filter("workload.start before y") == "(< workload.start (coalesce s1.own_first s1.first))");
  CHECK(filter("not (y before x)").rfind("(not ", 0) == 0);
}

TEST_CASE("temporal order: operands are bindings or times, the offset a duration on the right") {
  auto order_rule = [](const std::string& cond) {
    return with_err("rule S stage symptoms {\n  for x: event app.err\n  where " + cond + "\n  symptom t.a { summary: \"a\" }\n}\n");
  };
  // line 10 is the where
  expect_only(order_rule("x.code before x"), "E0301", "10:9");
  expect_only(order_rule("x before x - 5"), "E0301", "10:22");
  expect_only(order_rule("x - 5m before x"), "E0301", "10:9");
  expect_only(order_rule("x not after x.dev"), "E0301", "10:21");
  expect_only(order_rule("x before y"), "E0202", "10:18");
  CHECK(compile(order_rule("x not before x - 5m and x.ts not after workload.end")).ok());
}

TEST_CASE("symptom at: the time of the evidence, a time expression") {
  auto cat = compile_ok(with_err("rule T stage symptoms {\n  for e: event app.err\n"
                                 "  symptom t.x on job priority 5 at time(e.dev) { summary: \"x\" }\n}\n"));
  const auto& a = cat->rules[0].actions[0];
  REQUIRE(a.at.has_value());
  CHECK(sexpr(*a.at, *cat) == "(time e0.dev)");
  CHECK(a.fields.empty());  // `at` is not a field of the symptom
  expect_only(with_err("rule T stage symptoms {\n  for e: event app.err\n  symptom t.x at e.code { summary: \"x\" }\n}\n"),
              "E0301", "10:18");
  CHECK(type_of("time(e.dev)") == Type::Time);
  expect_type_error("time(e.code)", "10:25");
  CHECK(type_of("workload.scheduler") == Type::String);
  CHECK(type_of("workload.node_names") == Type::String);
}

TEST_CASE("scenario workload ... on SCHEDULER") {
  auto cat = compile_ok(with_err("scenario \"s\" {\n  workload \"j\" on kubernetes\n  expect status unattributed\n}\n"));
  CHECK(cat->scenarios[0].scheduler == "kubernetes");
  CHECK(cat->scenarios[0].workload_id == "j");
  expect_only(with_err("scenario \"s\" {\n  workload \"j\" on moon\n  expect status unattributed\n}\n"), "E0206", "9:19");
}

TEST_CASE("kinds: the union of emitted fields - a field absent from one emitter is still in the schema") {
  auto cat = compile_ok(R"(
extractor A from app, kernel {
  match /a(?<x>\d)/
  emit gpu.ev { x: int(x), from_a: true }
  test { line "a1" expect gpu.ev { x: 1, from_a: true } }
  test { line "b" expect none }
}
extractor B from kernel {
  match /b(?<x>\d)/
  emit gpu.ev { x: int(x), from_b: x }
  test { line "b2" expect gpu.ev { x: 2, from_b: "2" } }
  test { line "a" expect none }
}
)");
  CHECK(cat->event_kind_id("gpu.ev") >= 0);
  CHECK(cat->event_kind_id("gpu.nope") < 0);
  const auto& k = cat->event_kinds[static_cast<size_t>(cat->event_kind_id("gpu.ev"))];
  REQUIRE(k.fields.size() == 3);
  CHECK(field(k, "x")->type == Type::Int);
  CHECK(field(k, "from_a")->type == Type::Bool);
  CHECK(field(k, "from_b")->type == Type::String);
  // slot() agrees with the field list.
  for (size_t i = 0; i < k.fields.size(); ++i) CHECK(k.slot(k.fields[i].name_id) == static_cast<int32_t>(i));
  CHECK(k.slot(cat->field_id("nope")) == -1);
  // The built-in metric kind always exists.
  REQUIRE(cat->metric_kind >= 0);
  const auto& m = cat->event_kinds[static_cast<size_t>(cat->metric_kind)];
  CHECK(m.name == "metric.sample");
  CHECK(field(m, "name")->type == Type::String);
  CHECK(field(m, "value")->type == Type::Float);
  CHECK(field(m, "labels")->type == Type::String);
}

TEST_CASE("kinds: a query may name a kind that a rule of a later stage or file creates") {
  auto loaded = compile_sources({{"a.attr", with_err("rule Early stage early {\n  for e: event app.err\n"
                                                     "  where none(s: event app.derived)\n  emit app.derived { c: e.code }\n}\n")},
                                 {"b.attr", "rule Fin stage final {\n  for s: symptom late.kind\n  demote s because \"x\"\n}\n"
                                            "rule Sym stage symptoms {\n  for d: event app.derived\n"
                                            "  symptom late.kind { summary: \"c={d.c}\" }\n}\n"}});
  INFO(loaded.diagnostics.render());
  CHECK(loaded.ok());
}

TEST_CASE("interpolation: malformed placeholders") {
  SUBCASE("unclosed brace") {
    auto d = only_diagnostic(compile(value_rule("\"GPU {e.dev\"")));
    CHECK(d.code == "E0001");
    CHECK(at(d) == "10:25");  // under the '{' that is not closed
    CHECK(d.where.end_col == 26);
  }
  SUBCASE("not a path") {
    auto d = only_diagnostic(compile(value_rule("\"{e.code + 1}\"")));
    CHECK(d.code == "E0001");
  }
  SUBCASE("empty placeholder") {
    CHECK(only_diagnostic(compile(value_rule("\"{}\""))).code == "E0001");
  }
  SUBCASE("unknown field in a placeholder") {
    CHECK(only_diagnostic(compile(value_rule("\"{e.nope}\""))).code == "E0204");
  }
}

TEST_CASE("analysis continues past errors: independent problems are all reported") {
  auto loaded = compile(with_err(R"(
rule A stage symptoms {
  for e: event app.nope
  symptom t.a { summary: "a" }
}
rule B stage symptoms {
  for e: event app.err
  symptom t.b { v: e.dev + 1 }
}
rule C stage outcome {
  for s: symptom t.b
  classify s as cosmic "x"
}
)"));
  CHECK(codes(loaded) == std::vector<std::string>{"E0201", "E0301", "E0206"});
  CHECK_FALSE(loaded.ok());
  CHECK(loaded.diagnostics.error_count() == 3);
}

// ------------------------------------------------------- follow-on errors

// Regression: after an error inside a symptom's `summary` expression, sema adds a
// second, misleading "'summary' must be a string" (E0301) although the
// expression (here lower(...), which is a string) was already reported: the
// check in compiler/sema.cpp (Symptom action, `summary`) does not let the
// error placeholder (type null) through as every other check does.
// Repro: `symptom t.a { summary: lower(e.code) }` gives two E0301 errors,
// "argument 1 of 'lower' must be string, not int" and "'summary' must be a string".
TEST_CASE("follow-on errors: a bad summary expression is reported once") {
  auto loaded = compile(with_err("rule R stage symptoms {\n  for e: event app.err\n  symptom t.a { summary: lower(e.code) }\n}\n"));
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0301");
  CHECK(at(d) == "10:32");
}

// Regression: when RE2 rejects an extractor's regex, the capture names are never
// read, so every capture used in `emit` is reported as E0403 "'pci' is not a
// named capture of this extractor's regex" although the regex plainly defines
// it (compiler/sema.cpp analyze_extractor uses check.capture_names, which
// check_regex fills only when RE2 compiled the pattern).
// Repro: `match /NVRM: (?<pci>[0-9a-f:]+) 79(?!.*recovered)/` with
// `emit gpu.xid { pci: pci }` reports E0401, E0402 and a wrong E0403.
TEST_CASE("follow-on errors: captures of a rejected regex are not called undefined") {
  auto loaded = compile("extractor X from kernel {\n  match /NVRM: (?<pci>[0-9a-f:]+) 79(?!.*recovered)/\n"
                        "  emit gpu.xid { pci: pci }\n  test { line \"NVRM: 0000:3b:00 79\" expect gpu.xid }\n"
                        "  test { line \"x\" expect none }\n}\n");
  auto c = codes(loaded);
  CHECK(std::count(c.begin(), c.end(), "E0402") == 1);
  CHECK(std::count(c.begin(), c.end(), "E0403") == 0);
}

TEST_CASE("follow-on errors: an unknown kind does not also make its fields unknown") {
  auto loaded = compile(with_err("rule R stage symptoms {\n  for e: event app.nope\n  where e.code == 1 and e.dev == \"a\"\n"
                                 "  symptom t.a { summary: \"{e.dev}\" }\n}\n"));
  CHECK(codes(loaded) == std::vector<std::string>{"E0201"});
}
