// The bundled catalog, indexed vs unindexed, on randomized evidence.
//
// query_index_test.cpp checks each index shape on small hand-written
// catalogs and on random catalogs of join shapes; the golden verdicts check
// the bundled catalog with and without indexes on the example bundles
// (tests/golden/check_verdict.sh). This test feeds the bundled catalog
// evidence no example has: the lines of its own extractor tests (each a line
// as the real tool prints it), spread over random nodes, sources and times
// with many ties and some lines without a time, so that its real joins (same
// node, other nodes, within windows, keyed by GPU, rank, PCI address, link),
// counts, groups and symptom queries see many candidates per probe. Every
// verdict must be byte-identical with DiagnoseOptions::use_indexes on and
// off: an index that returned a wrong, missing, extra or misordered
// candidate changes a field, a merge, a demotion or the outcome.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "compiler/catalog_loader.h"
#include "runtime/diagnose.h"
#include "runtime/native_code.h"
#include "runtime/program.h"
#include "runtime/verdict_json.h"

using namespace culprit;

namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 1767261600LL * kSec;  // 2026-01-01T10:00:00Z

std::shared_ptr<const ir::Catalog> bundled_catalog() {
  auto loaded = load_catalog({CULPRIT_STDLIB_FOR_TESTS});
  INFO(loaded.diagnostics.render());
  REQUIRE(loaded.ok());
  return loaded.catalog;
}

struct SampleLine {
  std::string source, text;
};

// Every extractor test line that emits something, once per source the
// extractor reads.
std::vector<SampleLine> sample_lines(const ir::Catalog& cat) {
  std::vector<SampleLine> out;
  for (const auto& x : cat.extractors)
    for (const auto& t : x.tests)
      if (!t.expect_none)
        for (const auto& s : x.sources) out.push_back({s, t.line});
  return out;
}

WorkloadContext context(int nodes, bool failed) {
  WorkloadContext c;
  c.workload_id = "job-11";
  c.scheduler = "slurm";
  c.start = kT0 - 600 * kSec;
  c.end = kT0 + 600 * kSec;
  for (int i = 1; i <= nodes; ++i) c.nodes.push_back("node-0" + std::to_string(i));
  c.terminal.state = failed ? "FAILED" : "COMPLETED";
  c.terminal.exit_code = failed ? 1 : 0;
  return c;
}

std::vector<Observation> random_evidence(std::mt19937_64& rng, const std::vector<SampleLine>& lines, int nodes) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<Observation> out;
  // A few kinds of failure, repeated on many nodes: draw from a small subset
  // of the lines so that joins find many partners.
  std::vector<size_t> subset;
  for (int i = 0, n = pick(4, 24); i < n; ++i) subset.push_back(static_cast<size_t>(pick(0, static_cast<int>(lines.size()) - 1)));
  for (int i = 0, n = pick(30, 160); i < n; ++i) {
    const SampleLine& l = lines[subset[static_cast<size_t>(pick(0, static_cast<int>(subset.size()) - 1))]];
    Observation o;
    o.host = "node-0" + std::to_string(pick(1, nodes));
    o.source = l.source;
    o.text = l.text;
    if (pick(0, 9) > 0) o.ts = kT0 + static_cast<int64_t>(pick(-60, 120)) * 5 * kSec;  // ties, before and after
    out.push_back(std::move(o));
  }
  return out;
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
  v.engine = {};
  return v;
}

std::string evidence_text(const std::vector<Observation>& obs) {
  std::string t;
  for (const auto& o : obs) t += o.host + " " + o.source + " " + (o.ts ? std::to_string(*o.ts) : "-") + " " + o.text + "\n";
  return t;
}

}  // namespace

TEST_CASE("differential: the bundled catalog gives the same verdict indexed and unindexed on random evidence") {
  auto cat = bundled_catalog();
  std::string error;
  auto program = Program::build(cat, error);
  REQUIRE(program);
  const auto lines = sample_lines(*cat);
  REQUIRE(lines.size() > 50);
  int with_symptoms = 0, with_demotions = 0, attributed = 0;
  std::mt19937_64 rng(11);
  constexpr int kCases = 60;
  for (int i = 0; i < kCases; ++i) {
    const int nodes = 1 + static_cast<int>(rng() % 6);
    const auto obs = random_evidence(rng, lines, nodes);
    const auto ctx = context(nodes, rng() % 5 != 0);
    INFO("case " << i << "\n" << evidence_text(obs));
    const Verdict indexed = run(program, ctx, obs, true);
    const Verdict plain = run(program, ctx, obs, false);
    REQUIRE(verdict_to_json_text(indexed, true) == verdict_to_json_text(plain, true));
    with_symptoms += !indexed.symptoms.empty();
    attributed += indexed.outcome.status == "attributed";
    for (const auto& s : indexed.symptoms)
      if (s.state != SymptomState::Active) {
        ++with_demotions;
        break;
      }
  }
  // The cases reach the catalog's joins, demotions and outcomes, not only its extractors.
  CHECK(with_symptoms > kCases / 2);
  CHECK(with_demotions > kCases / 4);
  CHECK(attributed > 0);
}

TEST_CASE("differential: the bundled catalog as native code, indexed, agrees with unindexed interpretation") {
  std::string why;
  if (!jit_available(why)) {
    MESSAGE("JIT unavailable: " << why);
    return;
  }
  auto cat = bundled_catalog();
  JitOptions o;
  o.use_cache = false;
  std::string error;
  auto native = Program::build(cat, error, jit_factory(o));
  REQUIRE(native);
  REQUIRE(native->native());
  auto interp = Program::build(cat, error);
  REQUIRE(interp);
  const auto lines = sample_lines(*cat);
  std::mt19937_64 rng(1111);
  for (int i = 0; i < 12; ++i) {
    const int nodes = 1 + static_cast<int>(rng() % 6);
    const auto obs = random_evidence(rng, lines, nodes);
    const auto ctx = context(nodes, true);
    INFO("case " << i << "\n" << evidence_text(obs));
    CHECK(verdict_to_json_text(run(native, ctx, obs, true), true) == verdict_to_json_text(run(interp, ctx, obs, false), true));
  }
}
