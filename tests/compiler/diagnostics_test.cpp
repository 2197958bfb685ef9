// Diagnostics as users see them (rendered text, caret placement, the error
// cap) and the catalog loader's bookkeeping (E0002, load order, the content
// digest that identifies the exact rule text behind a verdict).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::at;
using culprit::testing::codes;
using culprit::testing::compile;
using culprit::testing::kErrExtractor;
using culprit::testing::only_diagnostic;
using culprit::testing::TempDir;

namespace {

// Splits rendered output into lines (without the '\n').
std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// Number of UTF-8 code points in `s` (what a terminal advances for text
// without wide characters).
size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// `n` independent E0202 errors in one rule, one per line starting at line 10.
std::string rule_with_unknown_names(int n) {
  std::string text = std::string(kErrExtractor) + "rule R stage symptoms {\n  for e: event app.err\n";
  for (int i = 0; i < n; ++i) text += "  where unknown_" + std::to_string(i) + "\n";
  return text + "  symptom t.a { summary: \"a\" }\n}\n";
}

}  // namespace

TEST_CASE("render: path:line:col, code, message, the source line and a caret under the token") {
  auto loaded = compile(std::string(kErrExtractor) +
                            "rule R stage symptoms {\n  for e: event app.errr\n  symptom t.a { summary: \"a\" }\n}\n",
                        "rules/bad.attr");
  auto d = only_diagnostic(loaded);
  CHECK(render_diagnostic(d) ==
        "rules/bad.attr:9:16: error[E0201]: unknown event kind 'app.errr'\n"
        " 9 |   for e: event app.errr\n"
        "   |                ^~~~~~~~\n"
        "   = help: did you mean 'app.err'?\n");
  // The sink renders the same text for its one diagnostic.
  CHECK(loaded.diagnostics.render() == render_diagnostic(d));
}

TEST_CASE("render: the gutter widens with the line number") {
  std::string text = std::string(kErrExtractor);
  for (int i = 0; i < 100; ++i) text += "# filler\n";
  text += "rule R stage nowhere {\n  for e: event app.err\n  symptom t.a { summary: \"a\" }\n}\n";
  auto loaded = compile(text);
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0205");
  CHECK(render_diagnostic(d) ==
        "t.attr:108:14: error[E0205]: unknown stage 'nowhere' (stages: early, symptoms, scrub, aggregate, final, "
        "outcome, post_outcome)\n"
        " 108 | rule R stage nowhere {\n"
        "     |              ^~~~~~~\n");
}

TEST_CASE("render: a one-character token gets a single caret - tabs before it are kept") {
  auto loaded = compile(std::string(kErrExtractor) +
                        "rule R stage symptoms {\n\tfor e: event app.err\n\twhere\te.code == x\n\tsymptom t.a { summary: \"a\" }\n}\n");
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0202");
  CHECK(at(d) == "10:18");
  auto lines = lines_of(render_diagnostic(d));
  REQUIRE(lines.size() == 3);
  CHECK(lines[1] == " 10 | \twhere\te.code == x");
  // The tabs are reproduced so the caret lands under `x` whatever the tab width.
  CHECK(lines[2] == "    | \t     \t          ^");
}

TEST_CASE("render: a syntax error at end of input points just past the last character") {
  // No trailing newline: end of input is right after `job` on line 2.
  auto loaded = compile("rule R stage early {\n  emit a.b on job");
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0001");
  CHECK(at(d) == "2:18");
  auto lines = lines_of(render_diagnostic(d));
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] == "t.attr:2:18: error[E0001]: syntax error: unexpected end of file: the '{' on line 1 is never closed");
  CHECK(lines[1] == " 2 |   emit a.b on job");
  CHECK(lines[2] == "   | " + std::string(17, ' ') + "^");
  // The brace that was never closed, as a note with its own line and caret.
  CHECK(lines[3] == "t.attr:1:20: note: '{' opened here");
  CHECK(lines[4] == " 1 | rule R stage early {");
  CHECK(lines[5] == "   | " + std::string(19, ' ') + "^");
  CHECK(lines[6] == "   = help: add the missing '}'");
}

TEST_CASE("render: a stray character is underlined where it stands") {
  // Keep the LoadedCatalog alive: a Diagnostic points into the source text its sink owns.
  auto loaded = compile("rule R stage early {\n  emit a.b on job { x: 1 $ }\n}\n");
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0001");
  CHECK(at(d) == "2:26");
  auto lines = lines_of(render_diagnostic(d));
  REQUIRE(lines.size() == 3);
  CHECK(lines[1] == " 2 |   emit a.b on job { x: 1 $ }");
  CHECK(lines[2] == "   | " + std::string(25, ' ') + "^");
}

// Regression: the caret prefix has one space per *byte* of the source line, so every
// multi-byte UTF-8 character before the token (here the 2-byte "é") pushes the
// caret one column to the right of the token on a terminal. Repro:
//   printf 'rule R stage symptoms {\n  for e: event metric.sample\n  where e.name == "é" and zed\n  symptom a.b on job { summary: "x" }\n}\n' > u.attr
//   culprit check --no-stdlib u.attr    # the caret sits under "ed", not "zed"
TEST_CASE("render: the caret lines up under the token after multi-byte characters") {
  auto loaded = compile("rule R stage symptoms {\n  for e: event metric.sample\n  where e.name == \"é\" and zed\n"
                        "  symptom a.b on job { summary: \"x\" }\n}\n");
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0202");
  auto lines = lines_of(render_diagnostic(d));
  REQUIRE(lines.size() == 3);
  const std::string src = lines[1].substr(lines[1].find(" | ") + 3);
  const std::string caret = lines[2].substr(lines[2].find(" | ") + 3);
  // Display columns, counted in code points.
  CHECK(code_points(caret.substr(0, caret.find('^'))) == code_points(src.substr(0, src.find("zed"))));
  // One '^' per character of the token.
  CHECK(caret.substr(caret.find('^')) == "^~~");
}

TEST_CASE("render: diagnostics without a position, and colour") {
  auto loaded = load_catalog({"/nonexistent/culprit-rules-dir"});
  auto d = only_diagnostic(loaded);
  CHECK(d.code == "E0002");
  CHECK(d.where.file == nullptr);
  CHECK(render_diagnostic(d) == "error[E0002]: rule path '/nonexistent/culprit-rules-dir' does not exist\n");

  auto typed_loaded = compile(std::string(kErrExtractor) +
                              "rule R stage symptoms {\n  for e: event app.errr\n  symptom t.a { summary: \"a\" }\n}\n");
  auto typed = only_diagnostic(typed_loaded);
  const std::string colored = render_diagnostic(typed, true);
  CHECK(colored.find("\033[1;31m") != std::string::npos);  // errors in bold red
  CHECK(colored.find("\033[0m") != std::string::npos);
  CHECK(render_diagnostic(typed, false).find('\033') == std::string::npos);
}

TEST_CASE("error cap: at most 20 errors are kept and printed, then 'too many errors'") {
  SUBCASE("exactly 20: no cap line") {
    auto loaded = compile(rule_with_unknown_names(20));
    CHECK(loaded.diagnostics.error_count() == 20);
    CHECK(loaded.diagnostics.all().size() == 20);
    CHECK(loaded.diagnostics.render().find("too many errors") == std::string::npos);
  }
  SUBCASE("21: one more not shown") {
    auto loaded = compile(rule_with_unknown_names(21));
    CHECK(loaded.diagnostics.error_count() == 21);
    // All are kept (so the first 20 by position can be chosen), 20 are printed.
    CHECK(loaded.diagnostics.all().size() == 21);
    const std::string r = loaded.diagnostics.render();
    const std::string cap = "\nerror: too many errors (1 more not shown)\n";
    REQUIRE(r.size() > cap.size());
    CHECK(r.substr(r.size() - cap.size()) == cap);
  }
  SUBCASE("25: the first 20 in order, five suppressed") {
    auto loaded = compile(rule_with_unknown_names(25));
    CHECK_FALSE(loaded.ok());
    CHECK(loaded.diagnostics.error_count() == 25);
    auto all = loaded.diagnostics.sorted();
    REQUIRE(all.size() == 25);
    for (size_t i = 0; i < all.size(); ++i) {
      CAPTURE(i);
      CHECK(all[i]->code == "E0202");
      CHECK(all[i]->where.line == 10 + i);
    }
    const std::string r = loaded.diagnostics.render();
    CHECK(r.find("unknown_19") != std::string::npos);
    CHECK(r.find("unknown_20") == std::string::npos);
    auto lines = lines_of(r);
    CHECK(lines.back() == "error: too many errors (5 more not shown)");
    // 20 diagnostics of three lines each, plus the cap line.
    CHECK(lines.size() == 61);
  }
  SUBCASE("syntax errors count toward the same cap") {
    std::string text;
    for (int i = 0; i < 30; ++i) text += "rule R" + std::to_string(i) + " stage early {\n  emit a.b on job { x: }\n}\n";
    auto loaded = compile(text);
    CHECK(loaded.diagnostics.error_count() == 30);
    CHECK(loaded.diagnostics.all().size() == 30);
    CHECK(lines_of(loaded.diagnostics.render()).back() == "error: too many errors (10 more not shown)");
  }
}

TEST_CASE("Diagnostics sink: warnings are kept but are not errors") {
  Diagnostics d;
  CHECK_FALSE(d.has_errors());
  d.warning("E0999", {}, "just saying");
  CHECK_FALSE(d.has_errors());
  CHECK(d.error_count() == 0);
  CHECK(d.all().size() == 1);
  CHECK(d.render() == "warning[E0999]: just saying\n");
  d.error("E0001", {}, "boom");
  CHECK(d.has_errors());
  CHECK(d.error_count() == 1);
}

TEST_CASE("SourceFile::line_text strips line endings and handles the last line") {
  auto f = make_source_file("x.attr", "one\r\ntwo\n\nlast");
  CHECK(f->line_text(1) == "one");
  CHECK(f->line_text(2) == "two");
  CHECK(f->line_text(3) == "");
  CHECK(f->line_text(4) == "last");
  CHECK(f->line_text(5) == "");
  CHECK(f->line_text(0) == "");
}

// ------------------------------------------------------------------ digest

TEST_CASE("digest: sha256 of the catalog text, stable for the same text") {
  const std::string text = std::string(kErrExtractor) + "rule R stage symptoms {\n  for e: event app.err\n"
                                                        "  symptom t.a { summary: \"a\" }\n}\n";
  auto a = compile_sources({{"a.attr", text}});
  auto b = compile_sources({{"a.attr", text}});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const std::string& digest = a.catalog->digest;
  REQUIRE(digest.size() == 7 + 64);
  CHECK(digest.rfind("sha256:", 0) == 0);
  CHECK(digest.find_first_not_of("0123456789abcdef", 7) == std::string::npos);
  CHECK(b.catalog->digest == digest);

  SUBCASE("one byte changed gives another digest") {
    // Edits that keep the file valid, so the digest exists: a byte inside a
    // string, a space turned into a tab, a byte inside a comment.
    const size_t in_string = text.find("\"a\"") + 1;
    const size_t space = text.find(" stage");
    std::string other_string = text, tab = text;
    other_string[in_string] = 'b';
    tab[space] = '\t';
    for (const std::string& changed : {other_string, tab, text + "# x\n", text + "# y\n"}) {
      auto c = compile_sources({{"a.attr", changed}});
      REQUIRE(c.ok());
      CHECK(c.catalog->digest != digest);
    }
    auto x = compile_sources({{"a.attr", text + "# x\n"}});
    auto y = compile_sources({{"a.attr", text + "# y\n"}});
    CHECK(x.catalog->digest != y.catalog->digest);
  }
  SUBCASE("the file name is part of the digest") {
    auto renamed = compile_sources({{"b.attr", text}});
    REQUIRE(renamed.ok());
    CHECK(renamed.catalog->digest != digest);
  }
  SUBCASE("moving text between files changes the digest") {
    const size_t cut = text.find("rule R");
    auto split = compile_sources({{"a.attr", text.substr(0, cut)}, {"b.attr", text.substr(cut)}});
    auto split2 = compile_sources({{"a.attr", text.substr(0, cut - 1)}, {"b.attr", text.substr(cut - 1)}});
    REQUIRE(split.ok());
    REQUIRE(split2.ok());
    CHECK(split.catalog->digest != digest);
    CHECK(split.catalog->digest != split2.catalog->digest);
  }
}

TEST_CASE("load_catalog: sorted recursive load, relative-path digest, E0002") {
  const std::string ext = kErrExtractor;
  const std::string rule = "rule R stage symptoms {\n  for e: event app.err\n  symptom t.a { summary: \"a\" }\n}\n";
  TempDir one, two;
  for (const TempDir* d : {&one, &two}) {
    d->write("rules/b.attr", rule);
    d->write("rules/a/x.attr", "catalog \"demo\" version \"2.0.0\"\n" + ext);
    d->write("rules/notes.txt", "not a rule file {{{");
  }
  auto a = load_catalog({(one.path() / "rules").string()});
  INFO(a.diagnostics.render());
  REQUIRE(a.ok());
  CHECK(a.catalog->name == "demo");
  CHECK(a.catalog->version == "2.0.0");
  // Sorted by path: "a/x.attr" before "b.attr"; the .txt file is not read.
  REQUIRE(a.catalog->files.size() == 2);
  CHECK(std::filesystem::path(a.catalog->files[0]).filename() == "x.attr");
  CHECK(std::filesystem::path(a.catalog->files[1]).filename() == "b.attr");

  // The same files under another root give the same digest: it covers paths
  // relative to the rule directory, not where the directory happens to be.
  auto b = load_catalog({(two.path() / "rules").string()});
  REQUIRE(b.ok());
  CHECK(b.catalog->digest == a.catalog->digest);

  SUBCASE("one byte more") {
    two.write("rules/b.attr", rule + " ");
    auto c = load_catalog({(two.path() / "rules").string()});
    REQUIRE(c.ok());
    CHECK(c.catalog->digest != a.catalog->digest);
  }
  SUBCASE("a file renamed") {
    std::filesystem::rename(two.path() / "rules/b.attr", two.path() / "rules/c.attr");
    auto c = load_catalog({(two.path() / "rules").string()});
    REQUIRE(c.ok());
    CHECK(c.catalog->digest != a.catalog->digest);
  }
  SUBCASE("a single file path is a part of its own") {
    auto c = load_catalog({(one.path() / "rules/a/x.attr").string(), (one.path() / "rules/b.attr").string()});
    INFO(c.diagnostics.render());
    REQUIRE(c.ok());
    CHECK(c.catalog->files.size() == 2);
    CHECK(c.catalog->name == "demo");
  }
  SUBCASE("a missing path is E0002 and nothing is compiled") {
    auto c = load_catalog({(one.path() / "rules").string(), (one.path() / "missing").string()});
    CHECK_FALSE(c.ok());
    CHECK(codes(c) == std::vector<std::string>{"E0002"});
    CHECK(c.diagnostics.all()[0].message.find("missing") != std::string::npos);
  }
  SUBCASE("diagnostics name the file as it was found") {
    one.write("rules/c.attr", "rule Bad stage nowhere {\n  for e: event app.err\n  symptom t.b { summary: \"b\" }\n}\n");
    auto c = load_catalog({(one.path() / "rules").string()});
    auto d = only_diagnostic(c);
    CHECK(d.code == "E0205");
    CHECK(d.where.file->path == (one.path() / "rules/c.attr").string());
    CHECK(render_diagnostic(d).rfind((one.path() / "rules/c.attr").string() + ":1:16: error[E0205]", 0) == 0);
  }
}

TEST_CASE("sorted by position: files in load order, then line and column, whatever the discovery order") {
  // Sema finds extractor problems before rule problems and type errors in
  // evaluation order; the report reads top to bottom.
  auto loaded = compile_sources({{"a.attr", std::string(kErrExtractor) +
                                                "rule R stage final {\n  for s: symptom t.zz\n  demote s because \"x\"\n}\n"
                                                "rule S stage symptoms {\n  for e: event app.err\n  symptom t.a { summary: \"{e.nope}\" }\n}\n"},
                                 {"b.attr", "rule T stage symptoms {\n  for e: event app.errr\n  symptom t.b on job { summary: \"b\" }\n}\n"}});
  std::vector<std::string> order;
  for (const auto* d : loaded.diagnostics.sorted())
    order.push_back(d->where.file->path + ":" + std::to_string(d->where.line));
  CHECK(order == std::vector<std::string>{"a.attr:9", "a.attr:14", "b.attr:2"});
  // render() prints them in that order.
  const std::string r = loaded.diagnostics.render();
  CHECK(r.find("a.attr:9:") < r.find("a.attr:14:"));
  CHECK(r.find("a.attr:14:") < r.find("b.attr:2:"));
}

TEST_CASE("help and notes render after the excerpt, notes with their own line and caret") {
  auto f = make_source_file("x.attr", "rule R stage early {\n  emit a.b on job\n");
  Diagnostic d;
  d.code = "E0001";
  d.where = {f.get(), 2, 3, 2, 7};
  d.message = "something";
  d.help = "do this instead";
  d.notes.push_back({{f.get(), 1, 20, 1, 21}, "'{' opened here"});
  CHECK(render_diagnostic(d) ==
        "x.attr:2:3: error[E0001]: something\n"
        " 2 |   emit a.b on job\n"
        "   |   ^~~~\n"
        "x.attr:1:20: note: '{' opened here\n"
        " 1 | rule R stage early {\n"
        "   |                    ^\n"
        "   = help: do this instead\n");
}
