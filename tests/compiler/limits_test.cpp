// The compiler's limits (base/limits.h, issue 12): each exceeded limit is
// one coded diagnostic at the place it is exceeded, never a crash; below
// the limits nothing changes (a long `or` chain is balanced, same value).
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "base/limits.h"
#include "compiler/regex_check.h"
#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::at;
using culprit::testing::compile;
using culprit::testing::compile_ok;
using culprit::testing::kErrExtractor;
using culprit::testing::only_diagnostic;

namespace {

std::string rule_where(const std::string& cond) {
  return std::string(kErrExtractor) + "rule T stage symptoms {\n  for e: event app.err\n  where " + cond +
         "\n  symptom t.x { summary: \"x\" }\n}\n";
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

TEST_CASE("E0703: parentheses, calls and prefix operators nested past expr_depth") {
  size_t n = limits::kExprDepth + 1;
  for (const auto& cond : {repeat("(", n) + "true" + repeat(")", n), repeat("not ", n) + "true",
                           "e.code == " + repeat("-", n) + "1", repeat("lower(", n) + "e.dev" + repeat(")", n) + " == \"a\"",
                           // far past it: 100,000 levels crashed ANTLR's recursive descent before
                           repeat("(", 100000) + "true" + repeat(")", 100000)}) {
    auto d = only_diagnostic(compile(rule_where(cond.size() > 200 ? cond : cond)));
    CHECK(d.code == "E0703");
    CHECK(d.message.find("limit expr_depth exceeded") != std::string::npos);
    CHECK(d.where.line == 10);
  }
  // Just under the limit compiles.
  size_t ok = limits::kExprDepth - 8;
  compile_ok(rule_where(repeat("(", ok) + "e.fatal" + repeat(")", ok)));
  compile_ok(rule_where(repeat("not ", ok) + "e.fatal"));
}

TEST_CASE("E0703: a chain of arithmetic deeper than expr_depth") {
  auto d = only_diagnostic(compile(rule_where("e.code == " + repeat("1 + ", limits::kExprDepth + 10) + "1")));
  CHECK(d.code == "E0703");
}

TEST_CASE("E0704: more or/and operands than expr_alternatives; long chains below it are balanced, same meaning") {
  std::string many;
  for (size_t i = 0; i <= limits::kExprAlternatives; ++i) many += (i ? " or " : "") + std::string("e.code == ") + std::to_string(i);
  auto d = only_diagnostic(compile(rule_where(many)));
  CHECK(d.code == "E0704");
  CHECK(d.message.find("'or'") != std::string::npos);
  // 8,000 operands (a crash before): the same single diagnostic.
  std::string huge;
  for (int i = 0; i < 8000; ++i) huge += (i ? " or " : "") + std::string("e.code == ") + std::to_string(i);
  CHECK(only_diagnostic(compile(rule_where(huge))).code == "E0704");
  // 300 operands compile, and the balanced tree is shallow.
  std::string fine;
  for (int i = 0; i < 300; ++i) fine += (i ? " or " : "") + std::string("e.code == ") + std::to_string(i);
  auto cat = compile_ok(rule_where(fine));
  std::function<size_t(const ir::Expr&)> depth = [&](const ir::Expr& e) {
    size_t d = 0;
    for (const auto& k : e.kids) d = std::max(d, depth(k));
    return d + 1;
  };
  CHECK(depth(*cat->rules[0].for_query->filter) < 16);
}

TEST_CASE("E0705: an in list longer than in_list") {
  std::string list;
  for (size_t i = 0; i <= limits::kInList; ++i) list += (i ? "," : "") + std::to_string(i);
  auto d = only_diagnostic(compile(rule_where("e.code in [" + list + "]")));
  CHECK(d.code == "E0705");
  CHECK(at(d) == "10:9");
}

TEST_CASE("E0701/E0702: rule files and catalogs over their size") {
  auto loaded = culprit::compile_sources({{"big.attr", std::string(limits::kRuleFileBytes + 1, '\n')}});
  REQUIRE(loaded.diagnostics.all().size() == 1);
  CHECK(loaded.diagnostics.all()[0].code == "E0701");
  std::vector<std::pair<std::string, std::string>> parts;
  for (size_t i = 0; i * (limits::kRuleFileBytes - 1) <= limits::kCatalogBytes; ++i)
    parts.emplace_back("p" + std::to_string(i) + ".attr", std::string(limits::kRuleFileBytes - 1, '\n'));
  loaded = culprit::compile_sources(parts);
  REQUIRE_FALSE(loaded.diagnostics.all().empty());
  CHECK(loaded.diagnostics.all().back().code == "E0702");
}

TEST_CASE("E0706/E0707: regexes over their size or counted repeats, refused before either engine") {
  CHECK(regex_repeat_weight("a{3}b{1,5}c{2,}") == 3 + 5 + 2);
  CHECK(regex_repeat_weight("(?:ab{10}){20}") == 200);
  CHECK(regex_repeat_weight("(ab){7}") == 7);
  CHECK(regex_repeat_weight("[{]{1,3}\\{9}x{,4}") == 3);  // a class, an escape, and a literal brace
  CHECK(regex_repeat_weight("a{99999999999}") > limits::kRegexRepeat);
  auto check = check_regex("P (?<n>\\d+)[a-z]{1,30000}x", false, false);
  CHECK(check.limit_code == "E0707");
  CHECK_FALSE(check.ok);
  check = check_regex(std::string(limits::kRegexBytes + 1, 'a'), false, false);
  CHECK(check.limit_code == "E0706");
  check = check_regex("ERR (?<code>\\d{1,4})", false, false);
  CHECK(check.ok);
}

TEST_CASE("E0003: invalid UTF-8 is reported where it is") {
  auto loaded = culprit::compile_sources({{"u.attr", "catalog \"t\" version \"1\"\n# ok\n# caf\xff\n"}});
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0003");
  CHECK(at(d) == "3:6");
  CHECK(d.message.find("0xff") != std::string::npos);
}

TEST_CASE("diagnostics: a huge token gives a short diagnostic, the caret under it") {
  std::string text = std::string(300000, 'x') + " {\n";
  auto loaded = culprit::compile_sources({{"t.attr", text}});
  REQUIRE(loaded.diagnostics.has_errors());
  std::string rendered = loaded.diagnostics.render(false);
  // Each place quoted (the error's, and each note's: the unclosed '{' is one)
  // costs at most its message, a window of the line and the caret line under
  // it: about 3 KiB, however long the line (it was 157 MB for a 50 MB token).
  size_t places = 0;
  for (const auto& d : loaded.diagnostics.all()) places += 1 + d.notes.size();
  CHECK(places <= 4);
  CHECK(rendered.size() < places * 3 * limits::kDiagnosticBytes);
  for (const auto& d : loaded.diagnostics.all()) {
    CHECK(d.message.size() <= limits::kDiagnosticBytes);
    for (const auto& n : d.notes) CHECK(n.message.size() <= limits::kDiagnosticBytes);
  }
}

namespace {

// Every pattern is judged now exactly as check_regex judged it alone.
void check_same_verdicts(const std::vector<RegexToCheck>& patterns, const std::vector<RegexCheck>& alone) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    CAPTURE(patterns[i].pattern);
    auto after = check_regex(patterns[i].pattern, patterns[i].caseless, patterns[i].dotall);
    CHECK(after.ok == alone[i].ok);
    CHECK(after.limit_code == alone[i].limit_code);
    CHECK(after.re2_error == alone[i].re2_error);
    CHECK(after.hyperscan_error == alone[i].hyperscan_error);
    CHECK(after.capture_names == alone[i].capture_names);
  }
}

// The regex verdict entries in a cache directory.
size_t verdict_entries(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    n += e.path().filename().string().rfind("regex-verdicts-", 0) == 0;
  return n;
}

}  // namespace

TEST_CASE("RegexPrecheck: patterns added while the caller works, finish, cancel") {
  // Added in parts (as each rule file is parsed), the verdicts are those of
  // check_regex alone; a cancelled precheck leaves nothing half-known; the
  // verdict cache is written once, when the last precheck ends.
  culprit::testing::TempDir dir;
  const std::vector<RegexToCheck> patterns = {{"ERR (?<code>\\d{1,4}) A", false, false},
                                              {"nvlink (?<n>\\d+) down B", true, false},
                                              {"x*", false, false},
                                              {"link (?<l>\\d+) flap(?:ped)? C", false, true}};
  std::vector<RegexCheck> alone;
  set_regex_verdict_cache("");
  for (const auto& p : patterns) alone.push_back(check_regex(p.pattern, p.caseless, p.dotall));
  set_regex_verdict_cache(dir.path().string());
  {
    RegexPrecheck outer(2);
    {
      RegexPrecheck precheck(2);
      precheck.add({patterns[0]});
      precheck.add({patterns[1], patterns[2]});
      precheck.add({});
      precheck.finish();
      precheck.finish();  // a second finish is a no-op
    }
    CHECK(verdict_entries(dir.path()) == 0);  // `outer` is still open: not written yet
  }
  CHECK(verdict_entries(dir.path()) == 1);
  {
    RegexPrecheck cancelled(2);
    cancelled.add({patterns[3]});
    cancelled.cancel();
    cancelled.add({patterns[3]});  // after the end: ignored
  }
  check_same_verdicts(patterns, alone);
  CHECK(alone[0].ok);
  CHECK(alone[1].ok);
  CHECK_FALSE(alone[2].hyperscan_error.empty());
  CHECK(alone[3].ok);
  set_regex_verdict_cache("");
}

TEST_CASE("RegexPrecheck: checks on every core first, the same verdicts after") {
  // Accepted by both engines, refused by RE2, refused by Hyperscan only (it
  // matches the empty string), over a limit: each must be judged afterwards
  // exactly as check_regex judges it alone, and the acceptances written to
  // the verdict cache once.
  culprit::testing::TempDir dir;
  const std::vector<RegexToCheck> patterns = {
      {"ERR (?<code>\\d{1,4})", false, false}, {"nvlink (?<n>\\d+) down", true, false},
      {"(a)\\1", false, false},                 {"x*", false, false},
      {"P [a-z]{1,30000}x", false, false},      {"ERR (?<code>\\d{1,4})", false, false}};
  std::vector<RegexCheck> alone;
  set_regex_verdict_cache("");
  for (const auto& p : patterns) alone.push_back(check_regex(p.pattern, p.caseless, p.dotall));
  set_regex_verdict_cache(dir.path().string());
  {
    RegexPrecheck precheck(2);
    precheck.add(patterns);
  }  // finished by its destructor
  CHECK(verdict_entries(dir.path()) == 1);
  check_same_verdicts(patterns, alone);
  CHECK(alone[0].ok);
  CHECK(alone[1].ok);
  CHECK_FALSE(alone[2].re2_error.empty());
  CHECK_FALSE(alone[3].hyperscan_error.empty());
  CHECK(alone[4].limit_code == "E0707");
  // A new process (cache reloaded) knows the acceptances without compiling.
  set_regex_verdict_cache(dir.path().string());
  {
    RegexPrecheck precheck(2);
    precheck.add({patterns[0], patterns[1]});
  }
  CHECK(check_regex(patterns[1].pattern, true, false).ok);
  set_regex_verdict_cache("");
}
