// Tables (docs/language.md §3.1): what lookup() lowers to and what it
// returns on the interpreter and on the JIT, how (?&TABLE.COLUMN) expands in
// a regex (escaped, longest first, filtered), and the diagnostics E0104 to
// E0107 and E0210 with their positions.
#include <doctest/doctest.h>

#include <string>

#include "runtime/native_code.h"
#include "runtime/self_test.h"
#include "tests/support/inline_tests.h"
#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::at;
using culprit::testing::build_program;
using culprit::testing::codes;
using culprit::testing::compile;
using culprit::testing::compile_ok;
using culprit::testing::only_diagnostic;
using culprit::testing::sexpr;

namespace {

// Texts with regex metacharacters, a text that is a prefix of another, a
// negative code, null cells, and two rows of one meaning.
const char* const kErrors = R"attr(
table Errs {
  columns code, name, text, meaning
  row 2, "OOM", "out of memory", "oom"
  row 3, "OOM_HOST", "out of memory (host)", "oom"
  row 214, "ECC", "uncorrectable ECC error encountered", "memory"
  row -1, "ODD", "a.b [c]+", null
  row 999, "UNKNOWN", "unknown error", null
  row 5, null, null, null
}
extractor Err from app {
  match /error: (?<msg>(?&Errs.text))/
  emit t.err { msg: msg, code: lookup(Errs, text, msg, code), meaning: lookup(Errs, text, msg, meaning),
               back: lookup(Errs, code, lookup(Errs, text, msg, code), name) }
  test "a meaning" { line "error: uncorrectable ECC error encountered" expect t.err { code: 214, meaning: "memory", back: "ECC" } }
  test "the longer of two texts" { line "error: out of memory (host)" expect t.err { msg: "out of memory (host)", code: 3, meaning: "oom" } }
  test "the shorter" { line "error: out of memory" expect t.err { msg: "out of memory", code: 2, meaning: "oom" } }
  test "metacharacters are literal" { line "error: a.b [c]+" expect t.err { code: -1, meaning: null, back: "ODD" } }
  test "not a.b's pattern" { line "error: axb c+" expect none }
  test "a row without a meaning" { line "error: unknown error" expect t.err { code: 999, meaning: null } }
}
extractor Known from app {
  match /fatal (?<name>(?&Errs.name[meaning]))\b/
  emit t.known { name: name }
  test { line "fatal ECC" expect t.known { name: "ECC" } }
  test "a name without a meaning" { line "fatal UNKNOWN" expect none }
}
)attr";

}  // namespace

TEST_CASE("tables: a column reference is the column's escaped values, longest first") {
  auto cat = compile_ok(kErrors);
  CHECK(cat->extractors[0].pattern ==
        "error: (?<msg>(?:uncorrectable ECC error encountered|out of memory \\(host\\)|out of memory|unknown error|"
        "a\\.b \\[c\\]\\+))");
  // [meaning]: only the rows whose meaning is given.
  CHECK(cat->extractors[1].pattern == "fatal (?<name>(?:OOM_HOST|ECC|OOM))\\b");
}

TEST_CASE("tables: lookup is an if/in chain, one link per distinct result") {
  auto cat = compile_ok(kErrors);
  const auto& f = cat->extractors[0].fields;
  // meaning: two results, "oom" (two keys) then "memory"; null falls out.
  CHECK(sexpr(f[2].value, *cat) ==
        "(if (in $0 \"out of memory\" \"out of memory (host)\") \"oom\" "
        "(if (in $0 \"uncorrectable ECC error encountered\") \"memory\" null))");
  CHECK(f[1].value.type == Type::Int);
  CHECK(f[2].value.type == Type::String);
}

TEST_CASE("tables: lookups pass their tests on the interpreter") {
  expect_tests_pass(build_program(compile_ok(kErrors)), 8);
}

TEST_CASE("tables: lookups pass their tests on the JIT") {
  if (auto p = jit_program_or_skip(compile_ok(kErrors))) expect_tests_pass(p, 8);
}

TEST_CASE("tables: a test that expects another row's value fails") {
  std::string text = kErrors;
  const std::string right = "expect t.err { code: 214,", wrong = "expect t.err { code: 215,";
  REQUIRE(text.find(right) != std::string::npos);
  text.replace(text.find(right), right.size(), wrong);
  CHECK(run_inline_tests(build_program(compile_ok(text))).failed == 1);
}

TEST_CASE("tables: a lookup in a rule's where, and one whose results are all null") {
  auto cat = compile_ok(std::string(kErrors) + R"attr(
table Quiet {
  columns code, note
  row 1, null
}
rule Memory stage symptoms {
  for e: event t.err where lookup(Errs, code, e.code, meaning) == "memory"
  symptom t.memory priority 90 { summary: "{e.msg}", note: lookup(Quiet, code, e.code, note) }
}
)attr");
  REQUIRE(cat->rules.size() == 1);
  const auto& r = cat->rules[0];
  REQUIRE(r.for_query->filter);
  CHECK(sexpr(*r.for_query->filter, *cat) ==
        "(== (if (in e0.code 2 3) \"oom\" (if (in e0.code 214) \"memory\" null)) \"memory\")");
  // No row gives a note: the lookup is the constant null, typed null (the
  // JIT refuses a constant whose value has another type than its expression).
  const auto& note = r.actions[0].fields.back().value;
  CHECK(sexpr(note, *cat) == "null");
  CHECK(note.type == Type::Null);
}

TEST_CASE("tables: E0104, E0105, E0106 in the declaration") {
  auto loaded = compile(R"attr(
table T {
  columns a, b, a
  row 1, "x", 2
  row 2, "y"
  row "3", "z", 4
}
table T {
  columns a
}
)attr");
  auto c = codes(loaded);
  CHECK(c == std::vector<std::string>{"E0104", "E0105", "E0106", "E0104"});
  const auto& all = loaded.diagnostics.all();
  REQUIRE(all.size() == 4);
  CHECK(at(all[0]) == "3:17");  // the second column `a`
  CHECK(at(all[1]) == "5:3");   // the short row
  CHECK(at(all[2]) == "6:7");   // the string among ints
  REQUIRE(all[2].notes.size() == 1);
  CHECK(all[2].notes[0].where.line == 4);
  CHECK(at(all[3]) == "8:7");   // the second table T
}

TEST_CASE("tables: E0107, a lookup by a column that holds a value twice") {
  auto loaded = compile(R"attr(
table T {
  columns k, v
  row "a", 1
  row "a", 2
}
extractor E from app {
  match /x (?<k>\w+)/
  emit t.e { v: lookup(T, k, k, v) }
  test { line "x a" expect t.e }
  test { line "y" expect none }
}
)attr");
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0107");
  CHECK(at(d) == "9:27");
  REQUIRE(d.notes.size() == 2);
  CHECK(d.notes[0].where.line == 4);
  CHECK(d.notes[1].where.line == 5);
}

TEST_CASE("tables: E0210, unknown table or column, in a lookup and in a regex") {
  auto loaded = compile(R"attr(
table Errs {
  columns code, text
  row 1, "one"
}
extractor E from app {
  match /x (?<t>(?&Errs.txt)) (?<u>(?&Err.text))/
  emit t.e { a: lookup(Err, text, t, code), b: lookup(Errs, text, t, cod) }
  test { line "x one one" expect t.e }
  test { line "y" expect none }
}
)attr");
  auto c = codes(loaded);
  CHECK(c == std::vector<std::string>{"E0210", "E0210", "E0210", "E0210"});
  const auto& all = loaded.diagnostics.all();
  REQUIRE(all.size() == 4);
  CHECK(at(all[0]) == "7:25");  // txt, inside the regex
  CHECK(all[0].help.find("text") != std::string::npos);
  CHECK(at(all[1]) == "7:39");  // Err
  CHECK(at(all[2]) == "8:24");  // Err in lookup
  CHECK(at(all[3]) == "8:70");  // cod
}

TEST_CASE("tables: E0301, a value of another type than its column") {
  auto loaded = compile(R"attr(
table Errs {
  columns code, text
  row 1, "one"
}
extractor E from app {
  match /x (?<t>\w+)/
  emit t.e { a: lookup(Errs, code, t, text) }
  test { line "x one" expect t.e }
  test { line "y" expect none }
}
)attr");
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0301");
  CHECK(at(d) == "8:36");
}

namespace {

size_t depth(const ir::Expr& e) {
  size_t d = 0;
  for (const auto& k : e.kids) d = std::max(d, depth(k));
  return d + 1;
}

// A table of 300 rows, each its own result: the lookup is chunks of if/in
// links under coalesce(), not a 300-deep chain.
std::string big_table() {
  std::string t = "table Big {\n  columns key, res\n";
  for (int i = 0; i < 300; ++i) t += "  row \"k" + std::to_string(i) + "\", \"r" + std::to_string(i) + "\"\n";
  t += R"attr(}
extractor Big from app {
  match /key (?<n>\d+)/
  emit t.big { r: lookup(Big, key, "k" + n, res) }
  test { line "key 0" expect t.big { r: "r0" } }
  test { line "key 15" expect t.big { r: "r15" } }
  test { line "key 16" expect t.big { r: "r16" } }
  test { line "key 299" expect t.big { r: "r299" } }
  test { line "key 300" expect t.big { r: null } }
  test { line "none" expect none }
}
)attr";
  return t;
}

}  // namespace

TEST_CASE("tables: a lookup with many results stays shallow, and right on both engines") {
  auto cat = compile_ok(big_table());
  const auto& v = cat->extractors[0].fields[0].value;
  CHECK(depth(v) <= 40);
  expect_tests_pass(build_program(cat), 6);
  std::string why;
  if (!jit_available(why)) {
    MESSAGE("JIT unavailable: " << why);
    return;
  }
  JitOptions o;
  o.use_cache = false;
  std::string error;
  auto p = Program::build(cat, error, jit_factory(o));
  INFO(error);
  REQUIRE(p != nullptr);
  CHECK(p->evaluator() == "jit");
  expect_tests_pass(p, 6);
}
