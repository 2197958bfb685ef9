// The engine's memory-saving paths must not change a verdict: events given in
// batches (in any order) instead of one array, kinds freed after their last
// reader, the trail left out on request, and the verdict JSON streamed.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/engine.h"
#include "runtime/verdict_json.h"
#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::program_for;

namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 1767261600LL * kSec;  // 2026-01-01T10:00:00Z

// app.err is read in early and in symptoms; app.pair is emitted in early and
// read in symptoms (so it is freed after that rule); hw.fault is read by no
// rule at all (dropped at once); app.note is emitted but never read.
const std::string kCatalog = std::string(culprit::testing::kErrFaultExtractors) + R"attr(
rule Pair stage early {
  for e: event app.err
  group by e.node, e.dev
  emit app.pair { n: count(), dev: e.dev }
  emit app.note { n: count() }
}
rule PairSymptom stage symptoms {
  for p: event app.pair where p.n >= 2
  symptom app.paired key p.dev { summary: "{p.n} errors on {p.node}" }
}
rule ErrSymptom stage symptoms {
  for e: event app.err where e.code > 2
  symptom app.failure key e.dev priority e.code { summary: "error {e.code} on {e.node}/{e.dev}" }
}
rule Cascade stage final {
  for c: symptom app.paired
  demote v: symptom app.failure on other nodes because "after the pairs on {c.node}"
}
rule ClassifyPairs stage outcome {
  for s: symptom app.paired
  classify s as software "app.pairs"
}
)attr";

Event make_event(const ir::Catalog& cat, const std::string& kind, const std::string& node, int64_t t, int64_t line,
                 const std::string& text, const std::vector<std::pair<std::string, Value>>& fields) {
  Event e;
  e.kind = cat.event_kind_id(kind);
  REQUIRE(e.kind >= 0);
  e.host = node;
  e.producer = kind == "app.err" ? "Err" : "Fault";
  e.where = {node, kind == "app.err" ? "app" : "kernel", "logs/" + node + "/x.log", line, line * 100, t, "line", text};
  const auto& schema = cat.event_kinds[static_cast<size_t>(e.kind)];
  e.fields.assign(schema.fields.size(), Value::null());
  for (const auto& [name, v] : fields) e.fields[static_cast<size_t>(schema.slot(cat.field_id(name)))] = v;
  return e;
}

std::vector<Event> sample_events(const ir::Catalog& cat) {
  std::vector<Event> out;
  for (int n = 1; n <= 4; ++n) {
    const std::string node = "node-0" + std::to_string(n);
    for (int i = 0; i < 9; ++i) {
      const int64_t code = (i + n) % 5;
      const std::string dev(1, static_cast<char>('a' + i % 3));
      out.push_back(make_event(cat, "app.err", node, kT0 + (i * 5 + n) * kSec, i + 1,
                               "ERR " + std::to_string(code) + " dev=" + dev,
                               {{"code", Value::integer(code)}, {"dev", Value::string(dev)}}));
    }
    out.push_back(make_event(cat, "hw.fault", node, kT0 + n * kSec, 1, "FAULT ecc", {{"what", Value::string("ecc")}}));
  }
  return out;
}

WorkloadContext sample_context() {
  WorkloadContext c;
  c.workload_id = "job-7";
  c.scheduler = "slurm";
  c.start = kT0 - 3600 * kSec;
  c.end = kT0 + 3600 * kSec;
  c.nodes = {"node-01", "node-02", "node-03", "node-04"};
  c.terminal.state = "FAILED";
  c.terminal.exit_code = 1;
  return c;
}

Verdict as_verdict(const WorkloadContext& ctx, EngineResult r) {
  Verdict v;
  v.workload = ctx;
  v.outcome = std::move(r.outcome);
  v.affected_nodes = std::move(r.affected_nodes);
  v.symptoms = std::move(r.symptoms);
  v.trail = std::move(r.trail);
  return v;
}

const std::vector<std::pair<std::string, std::string>> kHostSources = {
    {"app", "node-01"}, {"app", "node-02"}, {"app", "node-03"}, {"app", "node-04"}};

}  // namespace

TEST_CASE("engine: events in batches, in any order, give the verdict of one array") {
  auto program = program_for(kCatalog);
  const auto& cat = program->catalog();
  const WorkloadContext ctx = sample_context();
  const Verdict reference = as_verdict(ctx, run_engine(*program, ctx, kHostSources, sample_events(cat)));
  const std::string expected = verdict_to_json_text(reference, true);
  REQUIRE(!reference.symptoms.empty());
  CHECK(reference.outcome.status == "attributed");
  CHECK(!reference.trail.empty());

  std::mt19937 rng(6);
  for (int round = 0; round < 8; ++round) {
    CAPTURE(round);
    std::vector<Event> events = sample_events(cat);
    std::shuffle(events.begin(), events.end(), rng);
    // Random cuts, empty batches included.
    std::vector<EventList> batches(1);
    for (auto& e : events) {
      if (rng() % 4 == 0) batches.emplace_back();
      batches.back().push_back(std::move(e));
    }
    if (round % 2) batches.emplace_back();
    std::shuffle(batches.begin(), batches.end(), rng);
    const Verdict v = as_verdict(ctx, run_engine(*program, ctx, kHostSources, std::move(batches)));
    CHECK(verdict_to_json_text(v, true) == expected);
  }
}

TEST_CASE("engine: without the trail, only the trail is missing") {
  auto program = program_for(kCatalog);
  const WorkloadContext ctx = sample_context();
  const Verdict with = as_verdict(ctx, run_engine(*program, ctx, kHostSources, sample_events(program->catalog())));
  std::vector<EventList> one(1);
  for (auto& e : sample_events(program->catalog())) one[0].push_back(std::move(e));
  const Verdict without = as_verdict(ctx, run_engine(*program, ctx, kHostSources, std::move(one), false));
  CHECK(without.trail.empty());
  CHECK(!with.trail.empty());
  CHECK(verdict_to_json_text(without, false) == verdict_to_json_text(with, false));
}

TEST_CASE("verdict JSON: streamed output is byte for byte the document") {
  auto program = program_for(kCatalog);
  const WorkloadContext ctx = sample_context();
  Verdict v = as_verdict(ctx, run_engine(*program, ctx, kHostSources, sample_events(program->catalog())));
  v.coverage.sources["app"].nodes_with_data = ctx.nodes;
  v.coverage.warnings.push_back("a \"quoted\"\nwarning");
  v.symptoms.front().evidence.front().text = "line with \"quotes\", a tab\t and \xc3\xa9";
  REQUIRE(v.symptoms.size() >= 2);
  // Every escape nlohmann writes, bytes it does not escape, text that is not
  // UTF-8 (its replacement), and a symptom without evidence: the evidence
  // array is written without nlohmann and must not differ.
  Evidence odd = v.symptoms.front().evidence.front();
  odd.text = std::string("ctl \x01\x02\x1f del \x7f bs \\ q \" nl \n cr \r ff \f bell \b nul ") + std::string(1, '\0') + " end";
  odd.ts.reset();
  odd.ts_origin = {};
  odd.host = "h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
  v.symptoms.front().evidence.push_back(odd);
  odd.text = "not utf-8: \xff\xfe \xc3 tail";
  odd.file = "bad \xe2\x82";
  v.symptoms.front().evidence.push_back(odd);
  v.symptoms.back().evidence.clear();
  // The symptom head is written without nlohmann too: every member, both
  // ways (null and set), and a field of every type, floats in forms whose
  // shortest text is not obvious.
  Symptom odd_symptom = v.symptoms.front();
  odd_symptom.id = "odd@job#\"k\"";
  odd_symptom.node.clear();
  odd_symptom.key = "k \xff";
  odd_symptom.control_plane = true;
  odd_symptom.state = SymptomState::Scrubbed;
  odd_symptom.summary = "tab\there \x01";
  odd_symptom.priority = -7;
  odd_symptom.first.reset();
  odd_symptom.last = int64_t{1767225600123456789};
  odd_symptom.classification = std::make_pair(std::string("hard\"ware"), std::string("gpu.x"));
  odd_symptom.demoted_by = StateChange{"R1", "why \"so\"", ""};
  odd_symptom.scrubbed_by = StateChange{"R2", "", "cause@node-01"};
  odd_symptom.field_names = {"zeta", "alpha", "f1", "f2", "f3", "s", "t", "d", "b", "n", "\"q\""};
  odd_symptom.fields = {Value::integer(INT64_MIN), Value::boolean(false), Value::real(0.1), Value::real(1e300),
                        Value::real(-0.0), Value::string("x\ny"), Value::time(0), Value::duration(90'000'000'000),
                        Value::boolean(true), Value::null(), Value::integer(3)};
  v.symptoms.push_back(odd_symptom);
  odd_symptom.fields.clear();  // an empty fields object
  odd_symptom.classification.reset();
  odd_symptom.demoted_by.reset();
  v.symptoms.push_back(odd_symptom);
  for (bool trail : {false, true}) {
    CAPTURE(trail);
    std::ostringstream out;
    write_verdict_json(out, v, trail);
    CHECK(out.str() == verdict_to_json_text(v, trail));
  }
  Verdict empty;
  empty.workload = ctx;
  std::ostringstream out;
  write_verdict_json(out, empty, true);
  CHECK(out.str() == verdict_to_json_text(empty, true));
}

TEST_CASE("verdict JSON: streamed strings match nlohmann's on every byte mix, and past a flush") {
  auto program = program_for(kCatalog);
  const WorkloadContext ctx = sample_context();
  Verdict v = as_verdict(ctx, run_engine(*program, ctx, kHostSources, sample_events(program->catalog())));
  REQUIRE(!v.symptoms.empty());
  REQUIRE(!v.symptoms.front().evidence.empty());
  // The streamed writer finds the bytes to look at 16 at a time: texts of
  // every length around that width, with escapes, multi-byte sequences
  // (whole, across a 16-byte boundary, cut at the end) and invalid bytes at
  // every position.
  const std::vector<std::string> pieces = {"a", "Z", " ", "\"", "\\", "\n", "\t", "\x01", "\x1f", "\x7f",
                                           "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff", "\xc3", "\xe2\x82",
                                           "\xed\xa0\x80", "\xc0\x80", "\xf4\x90\x80\x80"};
  std::mt19937 rng(11);
  const Symptom base = v.symptoms.front();
  std::vector<Symptom> extra;
  for (int i = 0; i < 600; ++i) {
    std::string text;
    const size_t want = static_cast<size_t>(i % 70);
    while (text.size() < want) {
      // Mostly ASCII letters, so runs longer than 16 bytes occur.
      if (rng() % 4 != 0) text += static_cast<char>('a' + rng() % 26);
      else text += pieces[rng() % pieces.size()];
    }
    Symptom s = base;
    s.id = "mix@node-01#" + std::to_string(i);
    s.summary = text;
    s.evidence.resize(1);
    s.evidence[0].text = text;
    s.evidence[0].file = text.substr(0, text.size() / 2);
    extra.push_back(std::move(s));
  }
  // And enough large symptoms that the writer flushes its buffer (1 MiB) more than once.
  for (int i = 0; i < 40; ++i) {
    Symptom s = base;
    s.id = "big@node-01#" + std::to_string(i);
    s.evidence.assign(20, base.evidence.front());
    for (auto& e : s.evidence) e.text = std::string(4000, static_cast<char>('a' + i % 26)) + "\"end\"";
    extra.push_back(std::move(s));
  }
  for (auto& s : extra) v.symptoms.push_back(std::move(s));
  std::ostringstream out;
  write_verdict_json(out, v, false);
  const std::string expected = verdict_to_json_text(v, false);
  REQUIRE(expected.size() > (size_t{3} << 20));
  CHECK(out.str() == expected);
}
