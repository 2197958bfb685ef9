// The JIT as a component: the bundled catalog compiles entirely to native
// code and passes its own tests on it; the compile cache (hits, damaged and
// foreign entries, object code LLVM cannot load); the Hyperscan database
// cache; code shared by threads; catalog generations loaded side by side and
// freed; errors reported as values.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <thread>

#include "compiler/jit/cache.h"
#include "compiler/jit/jit.h"
#include "runtime/diagnose.h"
#include "runtime/verdict_json.h"
#include "runtime/interpreter.h"
#include "runtime/native_code.h"
#include "runtime/self_test.h"
#include "base/sha256.h"
#include "tests/support/test_support.h"

namespace {

using namespace culprit;
namespace fs = std::filesystem;

std::shared_ptr<const ir::Catalog> stdlib() {
  auto loaded = load_catalog({CULPRIT_STDLIB_FOR_TESTS});
  INFO(loaded.diagnostics.render());
  REQUIRE(loaded.ok());
  return loaded.catalog;
}

std::shared_ptr<const Program> jit_program(std::shared_ptr<const ir::Catalog> cat, const std::string& cache_dir = "") {
  JitOptions o;
  o.use_cache = !cache_dir.empty();
  o.cache_dir = cache_dir;
  std::string error;
  auto p = Program::build(std::move(cat), error, jit_factory(o), cache_dir);
  INFO(error);
  REQUIRE(p);
  INFO(p->native_warning());
  REQUIRE(p->native());
  return p;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<fs::path> entries(const fs::path& dir, const std::string& kind) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(kind + "-", 0) == 0) out.push_back(e.path());
  return out;
}

// Rewrites the payload of a cache entry in place, keeping its key and fixing
// length and checksum, so that only the payload's meaning is wrong.
void replace_payload(const fs::path& entry, const std::function<void(std::string&)>& edit) {
  std::string bytes = read_bytes(entry);
  REQUIRE(bytes.size() > 88);
  std::string payload = bytes.substr(88);
  edit(payload);
  uint64_t n = payload.size();
  std::memcpy(bytes.data() + 48, &n, 8);
  Sha256 h;
  h.update(payload);
  auto sum = h.finish();
  std::memcpy(bytes.data() + 56, sum.data(), 32);
  write_bytes(entry, bytes.substr(0, 88) + payload);
}

// The object code is the last field of a JIT cache payload (u64 length +
// an ELF file); lets `edit` change it and re-encodes the length.
void edit_object(std::string& payload, const std::function<void(std::string&)>& edit) {
  for (size_t at = payload.size() - 8; at > 0; --at) {
    uint64_t n = 0;
    std::memcpy(&n, payload.data() + at, 8);
    if (at + 8 + n == payload.size() && n > 64 && payload.compare(at + 8, 4, "\x7f" "ELF") == 0) {
      std::string obj = payload.substr(at + 8);
      edit(obj);
      uint64_t m = obj.size();
      payload.resize(at);
      payload.append(reinterpret_cast<const char*>(&m), 8);
      payload += obj;
      return;
    }
  }
  FAIL("object code not found in the payload");
}

// Evaluates every `where` of the catalog's rules through the interpreter and
// through native code, over the catalog's own scenario-free world: only
// checks that both agree and that native code ran.
size_t agree_on_constants(const Program& p) {
  // Expressions without bindings (no events needed) still exercise the code.
  size_t ran = 0;
  ir::Rule empty;
  Env env;
  env.catalog = &p.catalog();
  env.regexes = &p.expression_regexes();
  env.slots.resize(64);
  for (const auto& r : p.catalog().rules) {
    env.rule = &r;
    for (const auto& w : r.wheres) {
      env.native = nullptr;
      Value a = evaluate(w, env);
      Value b;
      if (p.native()->run(w, env, b)) {
        ++ran;
        CHECK(values_equal(a, b));
        CHECK(a.type == b.type);
      }
    }
  }
  return ran;
}

}  // namespace

TEST_CASE("jit: every expression of the bundled catalog runs natively and its tests pass") {
  auto p = jit_program(stdlib());
  CHECK(p->evaluator() == "jit");
  const jit::Stats* st = native_stats(p->native());
  REQUIRE(st);
  for (const auto& why : st->not_compiled) MESSAGE("not compiled: " << why);
  CHECK(st->expressions > 100);
  CHECK(st->compiled == st->expressions);
  CHECK(st->distinct > 0);
  CHECK(st->distinct < st->expressions);  // rules repeat filters and field copies
  CHECK(st->object_bytes > 0);
  auto report = run_inline_tests(p);
  for (const auto& r : report.results)
    if (!r.passed) MESSAGE(r.location << " " << r.name << ": " << r.message);
  CHECK(report.failed == 0);
  CHECK(report.passed > 100);
  // The tests run on every core; the report keeps catalog order: line tests
  // by extractor, then scenarios.
  std::vector<std::string> order;
  for (const auto& x : p->catalog().extractors)
    for (const auto& t : x.tests) order.push_back("line " + (t.where.file ? t.where.file->path : "") + ":" + std::to_string(t.where.line));
  for (const auto& sc : p->catalog().scenarios)
    order.push_back("scenario " + (sc.where.file ? sc.where.file->path : "") + ":" + std::to_string(sc.where.line));
  std::vector<std::string> got;
  for (const auto& r : report.results) got.push_back(r.kind + " " + r.location);
  CHECK(got == order);
  CHECK(agree_on_constants(*p) > 0);
}

TEST_CASE("jit: identical expressions share one function, also from the cache") {
  // A second rule with the same expressions as the first (only the symptom
  // kind differs) adds expressions but no distinct tree: its functions are
  // aliases of the first rule's. Both rules
  // must act, natively, on a cold compile and on a warm load of the object.
  auto rule = [](const std::string& name, const std::string& kind) {
    return "rule " + name + " stage symptoms {\n  for e: event app.err where e.code > 3 and e.dev != \"x\"\n  symptom " + kind +
           " { n: e.code * 2, device: e.dev }\n}\n";
  };
  auto one = jit_program(culprit::testing::compile_ok(std::string(culprit::testing::kErrExtractor) + rule("A", "app.bad")));
  culprit::testing::TempDir dir;
  std::string cache = (dir.path() / "cache").string();
  const std::string both = std::string(culprit::testing::kErrExtractor) + rule("A", "app.bad") + rule("B", "app.also") +
                           "rule C stage symptoms {\n  for e: event app.err where e.code > 4\n"
                           "  symptom app.odd { n: e.code }\n}\n";
  for (int pass = 0; pass < 2; ++pass) {
    CAPTURE(pass);
    auto two = jit_program(culprit::testing::compile_ok(both), cache);
    const jit::Stats* a = native_stats(one->native());
    const jit::Stats* b = native_stats(two->native());
    REQUIRE(a);
    REQUIRE(b);
    CHECK(b->cache_hit == (pass == 1));
    CHECK(b->compiled == b->expressions);
    CHECK(b->expressions > a->expressions);
    // Rule C's filter differs from A's in one constant: a new tree.
    CHECK(b->distinct > a->distinct);
    CHECK(b->distinct < b->expressions);
    DiagnoseRequest req;
    req.context.workload_id = "w";
    req.context.nodes = {"n1"};
    for (const char* line : {"ERR 5 dev=a", "ERR 4 dev=b", "ERR 9 dev=x"}) {
      Observation o;
      o.host = "n1";
      o.source = "app";
      o.text = line;
      o.file = "app.log";
      req.observations.push_back(o);
    }
    // The same verdict, trail included, as the interpreter's; all three
    // rules acted (A and B on codes 5 and 4, C on 5 and 9).
    std::string error;
    auto interp = Program::build(culprit::testing::compile_ok(both), error);
    REQUIRE(interp);
    Verdict native_v, interp_v;
    REQUIRE(diagnose(two, req, {}, native_v, error));
    REQUIRE(diagnose(interp, req, {}, interp_v, error));
    CHECK(native_v.engine.evaluator == "jit");
    CHECK(verdict_to_json_text(native_v, true).size() > 0);
    std::set<std::string> acted;
    for (const auto& t : native_v.trail) acted.insert(t.rule);
    CHECK(acted == std::set<std::string>{"A", "B", "C"});
    native_v.engine = interp_v.engine;  // which evaluator ran, and timings
    CHECK(verdict_to_json_text(native_v, true) == verdict_to_json_text(interp_v, true));
  }
}

TEST_CASE("jit: the interpreter is chosen when asked, and reports it") {
  std::string error;
  auto p = Program::build(stdlib(), error);
  REQUIRE(p);
  CHECK(p->native() == nullptr);
  CHECK(p->evaluator() == "interpreter");
  CHECK(native_stats(p->native()) == nullptr);
}

TEST_CASE("jit: object code cache: warm start hits, damaged entries are misses and are rebuilt") {
  culprit::testing::TempDir dir;
  std::string cache = (dir.path() / "cache").string();
  auto cat = stdlib();

  auto cold = jit_program(cat, cache);
  CHECK_FALSE(native_stats(cold->native())->cache_hit);
  REQUIRE(entries(cache, "jit").size() == 1);
  fs::path entry = entries(cache, "jit").front();

  auto warm = jit_program(cat, cache);
  CHECK(native_stats(warm->native())->cache_hit);
  CHECK(native_stats(warm->native())->compiled == native_stats(cold->native())->compiled);
  CHECK(run_inline_tests(warm).failed == 0);

  SUBCASE("truncated") {
    std::string bytes = read_bytes(entry);
    write_bytes(entry, bytes.substr(0, bytes.size() / 3));
  }
  SUBCASE("one byte altered") {
    std::string bytes = read_bytes(entry);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
    write_bytes(entry, bytes);
  }
  SUBCASE("not a cache entry at all") { write_bytes(entry, "#!/bin/sh\necho hello\n"); }
  SUBCASE("valid entry, object code replaced by garbage") {
    // Passes every checksum and parses as a payload: LLVM itself must
    // reject the object, as an error.
    replace_payload(entry, [](std::string& payload) { edit_object(payload, [](std::string& obj) { obj.assign(4096, '\x42'); }); });
  }
  SUBCASE("valid entry, object code truncated to half an ELF file") {
    replace_payload(entry, [](std::string& payload) { edit_object(payload, [](std::string& obj) { obj.resize(obj.size() / 2); }); });
  }
  auto again = jit_program(cat, cache);
  const jit::Stats* st = native_stats(again->native());
  CHECK_FALSE(st->cache_hit);
  MESSAGE("cache note: " << st->cache_note);
  CHECK(st->compiled == st->expressions);
  CHECK(run_inline_tests(again).failed == 0);
  // ... and the rebuilt entry is good again.
  auto fixed = jit_program(cat, cache);
  CHECK(native_stats(fixed->native())->cache_hit);
}

TEST_CASE("jit: cache entries: round trip, key check, checksum, atomic replacement") {
  culprit::testing::TempDir dir;
  std::string d = (dir.path() / "c").string();
  std::string payload, note;
  CHECK_FALSE(cache::load(d, "x", "key", payload, note));
  CHECK(note.empty());  // plain miss
  REQUIRE(cache::store(d, "x", "key", std::string("hello\0world", 11), note));
  REQUIRE(cache::load(d, "x", "key", payload, note));
  CHECK(payload == std::string("hello\0world", 11));
  CHECK_FALSE(cache::load(d, "x", "other key", payload, note));
  // another key hashing to another file: plain miss; the same file under another key: rejected
  fs::copy_file(cache::entry_path(d, "x", "key"), cache::entry_path(d, "x", "k2"));
  CHECK_FALSE(cache::load(d, "x", "k2", payload, note));
  CHECK(note == "written for another key");
  std::string bytes = read_bytes(cache::entry_path(d, "x", "key"));
  write_bytes(cache::entry_path(d, "x", "key"), bytes + "x");
  CHECK_FALSE(cache::load(d, "x", "key", payload, note));
  CHECK(note == "truncated or padded payload");
  bytes[bytes.size() - 1] ^= 1;
  write_bytes(cache::entry_path(d, "x", "key"), bytes);
  CHECK_FALSE(cache::load(d, "x", "key", payload, note));
  CHECK(note == "checksum mismatch");
  CHECK(payload.empty());  // nothing of a rejected entry is handed out
  write_bytes(cache::entry_path(d, "x", "key"), bytes.substr(0, bytes.size() - 1));
  CHECK_FALSE(cache::load(d, "x", "key", payload, note));
  CHECK(note == "truncated or padded payload");
  write_bytes(cache::entry_path(d, "x", "key"), bytes.substr(0, 20));
  CHECK_FALSE(cache::load(d, "x", "key", payload, note));
  CHECK(note == "truncated header");
  write_bytes(cache::entry_path(d, "x", "key"), "");
  CHECK_FALSE(cache::load(d, "x", "key", payload, note));
  CHECK(note == "truncated header");
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().string().find(".tmp.") == std::string::npos);
  // A directory that cannot be created is reported, not thrown.
  write_bytes(dir.path() / "file", "x");
  CHECK_FALSE(cache::store((dir.path() / "file" / "sub").string(), "x", "key", "p", note));
  CHECK_FALSE(note.empty());
}

TEST_CASE("jit: Hyperscan databases are cached and a damaged entry is rebuilt") {
  culprit::testing::TempDir dir;
  std::string cache = (dir.path() / "cache").string();
  auto cat = stdlib();
  std::string error;
  auto cold = Program::build(cat, error, {}, cache);
  REQUIRE(cold);
  CHECK_FALSE(cold->timings().hyperscan_cached);
  auto warm = Program::build(cat, error, {}, cache);
  REQUIRE(warm);
  CHECK(warm->timings().hyperscan_cached);
  CHECK(warm->databases().size() == cold->databases().size());
  CHECK(run_inline_tests(warm).failed == 0);
  // A payload that passes the checksum but does not deserialize.
  auto files = entries(cache, "hyperscan");
  REQUIRE(files.size() == 1);
  replace_payload(files.front(), [](std::string& p) {
    for (size_t i = p.size() / 2; i < p.size() / 2 + 64 && i < p.size(); ++i) p[i] = '\x13';
  });
  auto damaged = Program::build(cat, error, {}, cache);
  REQUIRE(damaged);
  CHECK_FALSE(damaged->timings().hyperscan_cached);
  CHECK(run_inline_tests(damaged).failed == 0);
}

TEST_CASE("jit: compiled code is shared by threads") {
  auto p = jit_program(stdlib());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&]() {
      for (int i = 0; i < 3; ++i)
        if (run_inline_tests(p).failed != 0) ++failures;
    });
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
}

TEST_CASE("jit: generations side by side, the old one freed while the new one runs") {
  auto cat = stdlib();
  auto first = jit_program(cat);
  auto second = jit_program(cat);  // same catalog, same symbol names, another JITDylib
  CHECK(run_inline_tests(second).failed == 0);
  first.reset();  // frees the first generation's code (ResourceTracker)
  CHECK(run_inline_tests(second).failed == 0);
  // Many generations come and go without clashing or leaking symbols.
  for (int i = 0; i < 5; ++i) {
    auto p = jit_program(culprit::testing::compile_ok(std::string(culprit::testing::kErrExtractor) +
                                                      "rule R" + std::to_string(i) + " stage symptoms {\n"
                                                      "  for e: event app.err where e.code > " + std::to_string(i) + "\n"
                                                      "  symptom app.bad { n: e.code * 2 }\n}\n"));
    CHECK(native_stats(p->native())->compiled == native_stats(p->native())->expressions);
  }
  CHECK(run_inline_tests(second).failed == 0);
}

TEST_CASE("jit: errors come back as values") {
  std::string error;
  // Without the runtime helpers the JIT refuses, with a message, and the
  // Program falls back to the interpreter.
  auto code = jit::compile(*stdlib(), {}, jit::Options{}, error);
  CHECK(code == nullptr);
  CHECK(error.find("helper") != std::string::npos);
  CHECK(jit::llvm_version().rfind("19.", 0) == 0);
  CHECK_FALSE(jit::host_cpu_id().empty());
  std::string why;
  CHECK(jit_available(why));
  CHECK(why.empty());
}
