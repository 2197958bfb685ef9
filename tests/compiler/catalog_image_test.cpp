// Catalog images: a compiled catalog written to bytes and read back is the
// same catalog; bad bytes are refused with a reason, never a crash; the
// loader uses an image only for the same files, and never for files the
// compiler had something to say about.
#include "compiler/catalog_image.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "compiler/catalog_loader.h"

#include "tests/support/test_support.h"

using namespace culprit;
namespace fs = std::filesystem;

namespace {

// Every field the executors read, compared one by one (the image's own
// encoding is not trusted to judge itself).
void check_same(const ir::Expr& a, const ir::Expr& b, const ir::Catalog& ca, const ir::Catalog& cb) {
  REQUIRE(a.op == b.op);
  CHECK(a.type == b.type);
  CHECK(a.a == b.a);
  CHECK(a.b == b.b);
  CHECK(a.constant.type == b.constant.type);
  CHECK(values_equal(a.constant, b.constant));
  CHECK(a.where.line == b.where.line);
  CHECK(a.where.col == b.where.col);
  CHECK(a.where.end_line == b.where.end_line);
  CHECK(a.where.end_col == b.where.end_col);
  // The same file by position in the catalog, not by pointer.
  auto index_of = [](const ir::Catalog& c, const SourceFile* f) {
    for (size_t i = 0; i < c.sources.size(); ++i)
      if (c.sources[i].get() == f) return static_cast<int64_t>(i);
    return int64_t{-1};
  };
  CHECK(index_of(ca, a.where.file) == index_of(cb, b.where.file));
  REQUIRE(a.kids.size() == b.kids.size());
  for (size_t i = 0; i < a.kids.size(); ++i) check_same(a.kids[i], b.kids[i], ca, cb);
}

}  // namespace

TEST_CASE("catalog image: the bundled catalog comes back field for field") {
  LoadedCatalog loaded = load_catalog({CULPRIT_STDLIB_FOR_TESTS});
  REQUIRE(loaded.ok());
  const ir::Catalog& c = *loaded.catalog;
  std::string image = encode_catalog(c);
  REQUIRE_FALSE(image.empty());

  ir::Catalog back;
  std::string why;
  REQUIRE(decode_catalog(image, c.sources, back, why));
  CHECK(why.empty());
  CHECK(encode_catalog(back) == image);

  CHECK(back.name == c.name);
  CHECK(back.version == c.version);
  CHECK(back.digest == c.digest);
  CHECK(back.files == c.files);
  REQUIRE(back.parts.size() == c.parts.size());
  CHECK(back.parts[0].files == c.parts[0].files);
  CHECK(back.field_names == c.field_names);
  CHECK(back.metric_kind == c.metric_kind);
  REQUIRE(back.event_kinds.size() == c.event_kinds.size());
  for (size_t i = 0; i < c.event_kinds.size(); ++i) {
    CHECK(back.event_kinds[i].name == c.event_kinds[i].name);
    CHECK(back.event_kinds[i].slot_of_name == c.event_kinds[i].slot_of_name);
  }
  REQUIRE(back.extractors.size() == c.extractors.size());
  for (size_t i = 0; i < c.extractors.size(); ++i) {
    const auto &x = c.extractors[i], &y = back.extractors[i];
    CHECK(y.name == x.name);
    CHECK(y.re2_pattern == x.re2_pattern);
    CHECK(y.sources == x.sources);
    CHECK(y.keep_before_ns == x.keep_before_ns);
    REQUIRE(y.fields.size() == x.fields.size());
    for (size_t k = 0; k < x.fields.size(); ++k) check_same(x.fields[k].value, y.fields[k].value, c, back);
    REQUIRE(y.tests.size() == x.tests.size());
  }
  REQUIRE(back.rules.size() == c.rules.size());
  for (size_t i = 0; i < c.rules.size(); ++i) {
    const auto &x = c.rules[i], &y = back.rules[i];
    CHECK(y.name == x.name);
    CHECK(y.stage == x.stage);
    CHECK(y.slot_is_symptom == x.slot_is_symptom);
    REQUIRE(y.wheres.size() == x.wheres.size());
    for (size_t k = 0; k < x.wheres.size(); ++k) check_same(x.wheres[k], y.wheres[k], c, back);
    REQUIRE(y.queries.size() == x.queries.size());
    for (size_t k = 0; k < x.queries.size(); ++k) {
      CHECK(y.queries[k].kinds == x.queries[k].kinds);
      CHECK(y.queries[k].within_ns == x.queries[k].within_ns);
      REQUIRE(y.queries[k].filter.has_value() == x.queries[k].filter.has_value());
      if (x.queries[k].filter) check_same(*x.queries[k].filter, *y.queries[k].filter, c, back);
    }
    REQUIRE(y.actions.size() == x.actions.size());
    for (size_t k = 0; k < x.actions.size(); ++k) {
      CHECK(y.actions[k].kind == x.actions[k].kind);
      CHECK(y.actions[k].status == x.actions[k].status);
      REQUIRE(y.actions[k].summary.has_value() == x.actions[k].summary.has_value());
      if (x.actions[k].summary) check_same(*x.actions[k].summary, *y.actions[k].summary, c, back);
    }
  }
  REQUIRE(back.scenarios.size() == c.scenarios.size());
  for (size_t i = 0; i < c.scenarios.size(); ++i) {
    CHECK(back.scenarios[i].title == c.scenarios[i].title);
    CHECK(back.scenarios[i].logs.size() == c.scenarios[i].logs.size());
    CHECK(back.scenarios[i].expects.size() == c.scenarios[i].expects.size());
  }
  // Positions point into the sources the decoder was given.
  CHECK(back.sources == c.sources);
  CHECK(std::any_of(c.sources.begin(), c.sources.end(),
                    [&](const auto& s) { return s.get() == back.rules[0].where.file; }));
}

TEST_CASE("catalog image: bad bytes are refused with a reason") {
  LoadedCatalog loaded = load_catalog({CULPRIT_STDLIB_FOR_TESTS});
  REQUIRE(loaded.ok());
  const ir::Catalog& c = *loaded.catalog;
  std::string image = encode_catalog(c);
  ir::Catalog out;
  std::string why;

  SUBCASE("truncated anywhere") {
    for (size_t cut = 0; cut < image.size(); cut += 4093) {
      CAPTURE(cut);
      CHECK_FALSE(decode_catalog(std::string_view(image).substr(0, cut), c.sources, out, why));
      CHECK_FALSE(why.empty());
    }
  }
  SUBCASE("bytes after the end") {
    CHECK_FALSE(decode_catalog(image + "x", c.sources, out, why));
    CHECK(why == "bytes follow the end of the catalog");
  }
  SUBCASE("another format, or not an image") {
    std::string other = image;
    other[8] = static_cast<char>(other[8] + 1);
    CHECK_FALSE(decode_catalog(other, c.sources, out, why));
    CHECK(why.find("catalog image format") == 0);
    CHECK_FALSE(decode_catalog("{\"rules\": []}", c.sources, out, why));
    CHECK(why == "not a catalog image");
  }
  SUBCASE("other files") {
    auto fewer = c.sources;
    fewer.pop_back();
    CHECK_FALSE(decode_catalog(image, fewer, out, why));
    CHECK(why.find("files, not") != std::string::npos);
    auto renamed = c.sources;
    renamed[0] = make_source_file("elsewhere.attr", renamed[0]->text);
    CHECK_FALSE(decode_catalog(image, renamed, out, why));
    CHECK(why.find("'elsewhere.attr'") != std::string::npos);
  }
  SUBCASE("every single byte flipped in a stretch of the rules: refused or decoded, never a crash") {
    // The cache's checksums keep altered entries away; the decoder must
    // still survive one.
    for (size_t at = image.size() / 2; at < image.size() / 2 + 512; ++at) {
      std::string bad = image;
      bad[at] = static_cast<char>(~bad[at]);
      ir::Catalog got;
      std::string reason;
      if (!decode_catalog(bad, c.sources, got, reason)) CHECK_FALSE(reason.empty());
    }
  }
  SUBCASE("a position outside the catalog's files cannot be imaged") {
    ir::Catalog odd = c;
    auto stray = make_source_file("stray.attr", "x\n");
    odd.rules[0].where.file = stray.get();
    CHECK(encode_catalog(odd).empty());
  }
}

TEST_CASE("catalog image: the loader reuses an image for the same files only") {
  testing::TempDir rules_dir;
  const fs::path& rules = rules_dir.path();
  testing::TempDir cache_dir;
  const fs::path& cache = cache_dir.path();
  std::string text = R"attr(catalog "site" version "1.0.0"
extractor Err from app {
  match /ERR (?<code>\d+)/
  emit app.err { code: int(code) }
  test { line "ERR 7" expect app.err { code: 7 } }
  test { line "fine" expect none }
}
)attr";
  std::ofstream(rules / "a.attr") << text;

  LoadedCatalog first = load_catalog({rules.string()}, cache.string());
  REQUIRE(first.ok());
  CHECK_FALSE(first.from_image);
  LoadedCatalog second = load_catalog({rules.string()}, cache.string());
  REQUIRE(second.ok());
  CHECK(second.from_image);
  CHECK(second.parse_ms == 0);
  CHECK(second.catalog->digest == first.catalog->digest);
  CHECK(encode_catalog(*second.catalog) == encode_catalog(*first.catalog));
  CHECK(second.catalog->sources[0]->text == text);

  // Changed bytes compile again (and the change is seen).
  std::ofstream(rules / "a.attr") << text << R"attr(extractor Other from app {
  match /OTHER/
  emit app.other {}
  test { line "OTHER" expect app.other {} }
  test { line "fine" expect none }
}
)attr";
  LoadedCatalog changed = load_catalog({rules.string()}, cache.string());
  REQUIRE(changed.ok());
  CHECK_FALSE(changed.from_image);
  CHECK(changed.catalog->extractors.size() == 2);

  // The same bytes under another path compile again: diagnostics and test
  // locations name the path.
  testing::TempDir moved_dir;
  const fs::path& moved = moved_dir.path();
  fs::copy_file(rules / "a.attr", moved / "a.attr");
  LoadedCatalog elsewhere = load_catalog({moved.string()}, cache.string());
  REQUIRE(elsewhere.ok());
  CHECK_FALSE(elsewhere.from_image);
  CHECK(elsewhere.catalog->files[0] == (moved / "a.attr").string());

  // A corrupt entry is a miss: the catalog compiles and the entry is rewritten.
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().filename().string().rfind("catalog-", 0) == 0) std::ofstream(e.path(), std::ios::trunc) << "junk";
  LoadedCatalog after_junk = load_catalog({moved.string()}, cache.string());
  REQUIRE(after_junk.ok());
  CHECK_FALSE(after_junk.from_image);
  CHECK(load_catalog({moved.string()}, cache.string()).from_image);
}

TEST_CASE("catalog image: files with a warning are compiled every time, so the warning is said every time") {
  testing::TempDir rules_dir;
  const fs::path& rules = rules_dir.path();
  testing::TempDir cache_dir;
  const fs::path& cache = cache_dir.path();
  std::ofstream(rules / "a.attr") << R"attr(extractor Err from app {
  match /ERR (?<code>\d+)/
  emit app.err { code: int(code) }
  test { line "ERR 7" expect app.err { code: 7 } }
  test { line "fine" expect none }
}
scenario "an odd end" {
  nodes "node-01"
  terminal ZZZZZZZZZZ exit 1
  log "node-01" app "ERR 1"
  expect status unattributed
}
)attr";
  for (int run = 0; run < 2; ++run) {
    LoadedCatalog loaded = load_catalog({rules.string()}, cache.string());
    CAPTURE(loaded.diagnostics.render(false));
    REQUIRE(loaded.ok());
    CHECK_FALSE(loaded.from_image);
    REQUIRE(loaded.diagnostics.all().size() == 1);
    CHECK(loaded.diagnostics.all()[0].code == "E0206");
  }
}
