// Extractors with several `match` clauses (docs/language.md §3): how the
// clauses are compiled to one pattern, which clause takes a line (the first
// in source order that matches anywhere in it), that a field reads the
// captures of the clause that matched, on the interpreter and on the JIT,
// and E0405 for a capture some clause does not name.
#include <doctest/doctest.h>

#include <string>

#include "compiler/regex_check.h"
#include "runtime/native_code.h"
#include "runtime/self_test.h"
#include "tests/support/inline_tests.h"
#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::at;
using culprit::testing::build_program;
using culprit::testing::compile;
using culprit::testing::compile_ok;
using culprit::testing::only_diagnostic;
using culprit::testing::sexpr;

namespace {

// Two spellings of one message. The line "b=2 then a=1" is matched by both
// clauses, the second one further left: the first clause still takes it.
const char* const kTwoSpellings = R"(
extractor Spell from app {
  match /a=(?<v>\d+)(?<tail> end)?/
  match /B=(?<v>\d+)(?<tail> end)?/i
  emit t.spell { v: int(v), tail: tail is not null }
  test "first spelling" { line "a=1 end" expect t.spell { v: 1, tail: true } }
  test "second spelling, its own flags" { line "b=2" expect t.spell { v: 2 } }
  test "both match: the first clause wins" { line "b=2 then a=1" expect t.spell { v: 1 } }
  test { line "c=3" expect none }
}
)";

}  // namespace

TEST_CASE("match clauses: named groups made plain, outside classes and escapes") {
  CHECK(without_group_names("x(?<a>\\d+)(?P<b>y)") == "x(\\d+)(y)");
  CHECK(without_group_names("[(?<a>]\\(?<b>(?<=z)") == "[(?<a>]\\(?<b>(?<=z)");
  CHECK(without_group_names("(?:n)(?<!m)") == "(?:n)(?<!m)");
}

TEST_CASE("match clauses: one scanned pattern, and an anchored lazy one for captures") {
  auto same = match_union({{"a(?<x>1)", true, false}, {"b(?<x>2)", true, false}});
  CHECK(same.pattern == "(?:a(1))|(?:b(2))");
  CHECK(same.re2_pattern == "^(?:(?s:.*?)(?:a(1))|(?s:.*?)(?:b(2)))");
  CHECK(same.caseless);
  CHECK(!same.dotall);
  // Flags the clauses do not share move into each clause.
  auto mixed = match_union({{"a", false, false}, {"b", true, true}});
  CHECK(mixed.pattern == "(?:a)|(?is:b)");
  CHECK(!mixed.caseless);
  CHECK(!mixed.dotall);
  CHECK(check_regex(mixed.pattern, false, false).ok);
}

TEST_CASE("match clauses: captures are kept clause after clause, a field reads whichever took part") {
  auto cat = compile_ok(kTwoSpellings);
  const auto& x = cat->extractors[0];
  CHECK(x.capture_names == std::vector<std::string>{"v", "tail", "v", "tail"});
  CHECK(!x.caseless);  // the clauses' flags differ: they are written into the pattern
  CHECK(x.pattern == "(?:a=(\\d+)( end)?)|(?i:B=(\\d+)( end)?)");
  // `v` is group 1 of the first clause or group 1 of the second (group 3 in
  // all): only one
  // of them takes part in a match, the other is null.
  CHECK(sexpr(x.fields[0].value, *cat) == "(int (coalesce $0 $2))");
  CHECK(sexpr(x.fields[1].value, *cat) == "(is-not-null (coalesce $1 $3))");
}

TEST_CASE("match clauses: the inline tests pass on the interpreter") {
  expect_tests_pass(build_program(compile_ok(kTwoSpellings)), 4);
}

TEST_CASE("match clauses: the inline tests pass on the JIT") {
  if (auto p = jit_program_or_skip(compile_ok(kTwoSpellings))) expect_tests_pass(p, 4);
}

TEST_CASE("match clauses: a test that expects the other clause's captures fails") {
  std::string text = kTwoSpellings;
  const std::string first = "then a=1\" expect t.spell { v: 1 }", second = "then a=1\" expect t.spell { v: 2 }";
  REQUIRE(text.find(first) != std::string::npos);
  text.replace(text.find(first), first.size(), second);
  auto report = run_inline_tests(build_program(compile_ok(text)));
  CHECK(report.failed == 1);
}

TEST_CASE("match clauses: E0405, a capture some clause does not name") {
  auto loaded = compile(R"(
extractor Spell from app {
  match /a=(?<v>\d+) pid=(?<pid>\d+)/
  match /b=(?<v>\d+)/
  emit t.spell { v: int(v), pid: int(pid) }
  test { line "a=1 pid=2" expect t.spell { v: 1 } }
  test { line "c=3" expect none }
}
)");
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0405");
  CHECK(at(d) == "5:38");
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].where.line == 4);
  // A name no clause has is E0403, as with one clause.
  auto unknown = compile(R"(
extractor Spell from app {
  match /a=(?<v>\d+)/
  match /b=(?<v>\d+)/
  emit t.spell { v: int(w) }
  test { line "a=1" expect t.spell { v: 1 } }
  test { line "c=3" expect none }
}
)");
  CHECK(only_diagnostic(unknown).code == "E0403");
}

TEST_CASE("match clauses: each clause's regex is checked where it is written") {
  auto loaded = compile(R"(
extractor Spell from app {
  match /a=(?<v>\d+)/
  match /b=(?<v>\1)/
  emit t.spell { v: v }
  test { line "a=1" expect t.spell { v: "1" } }
  test { line "c=3" expect none }
}
)");
  // (The test's `v` is then untyped, as with one rejected regex: E0301 follows.)
  REQUIRE(!loaded.diagnostics.all().empty());
  const auto& d = loaded.diagnostics.all().front();
  CHECK(d.code == "E0402");
  CHECK(at(d) == "4:17");
}
