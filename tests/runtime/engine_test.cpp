// Engine tests: whole diagnoses of in-memory observations
// (DiagnoseRequest::observations) with small catalogs written here. Each test
// states the evidence, runs culprit::diagnose and checks the symptoms, their
// states and links, and the outcome; the last ones check that the verdict is
// a function of the evidence only (order of observations, thread count).
#include "runtime/diagnose.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "base/limits.h"
#include "base/timestamp.h"
#include "runtime/verdict_json.h"
#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::program_for;

namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 1767261600LL * kSec;  // 2026-01-01T10:00:00Z

// Every catalog below starts with the two extractors of kErrFaultExtractors.
const std::string kBase = culprit::testing::kErrFaultExtractors;

// An app.err symptom per (node, dev) and an hw.fault symptom per node.
const std::string kSymptoms = R"attr(
rule ErrSymptom stage symptoms {
  for e: event app.err
  symptom app.failure key e.dev priority e.code { summary: "error {e.code} on {e.node}/{e.dev}", first_code: e.code }
}
rule FaultSymptom stage symptoms {
  for f: event hw.fault
  symptom hw.fault priority 50 { summary: "{f.what} fault on {f.node}", what: f.what }
}
)attr";

Observation text(const std::string& host, const std::string& source, std::optional<int64_t> ts, const std::string& line) {
  Observation o;
  o.host = host;
  o.source = source;
  o.ts = ts;
  o.text = line;
  return o;
}

Observation numbered(Observation o, int64_t line) {
  o.line = line;
  return o;
}

Observation metric(const std::string& host, int64_t ts, const std::string& name, double value, const std::string& labels) {
  Observation o;
  o.host = host;
  o.source = "dcgm";
  o.ts = ts;
  o.is_metric = true;
  o.metric = name;
  o.value = value;
  o.labels = labels;
  return o;
}

WorkloadContext context(std::vector<std::string> nodes, const std::string& state = "FAILED", std::optional<int64_t> exit = 1) {
  WorkloadContext c;
  c.workload_id = "job-42";
  c.scheduler = "slurm";
  c.start = kT0 - 3600 * kSec;
  c.end = kT0 + 3600 * kSec;
  std::sort(nodes.begin(), nodes.end());
  c.nodes = std::move(nodes);
  c.terminal.state = state;
  c.terminal.exit_code = exit;
  return c;
}

Verdict run(const std::shared_ptr<const Program>& program, const WorkloadContext& ctx, std::vector<Observation> obs,
            unsigned threads = 1) {
  DiagnoseRequest req;
  req.context = ctx;
  req.observations = std::move(obs);
  DiagnoseOptions opt;
  opt.threads = threads;
  Verdict v;
  std::string error;
  const bool ok = diagnose(program, req, opt, v, error);
  INFO(error);
  REQUIRE(ok);
  return v;
}

const Symptom& symptom(const Verdict& v, const std::string& id) {
  for (const auto& s : v.symptoms)
    if (s.id == id) return s;
  std::string all;
  for (const auto& s : v.symptoms) all += s.id + " ";
  INFO("symptoms: " << all);
  FAIL("no symptom " << id);
  static Symptom none;
  return none;
}

Value field(const Symptom& s, const std::string& name) {
  for (size_t i = 0; i < s.field_names.size(); ++i)
    if (s.field_names[i] == name) return s.fields[i];
  FAIL("symptom " << s.id << " has no field " << name);
  return Value::null();
}

std::vector<std::string> ids(const Verdict& v) {
  std::vector<std::string> out;
  for (const auto& s : v.symptoms) out.push_back(s.id);
  return out;
}

}  // namespace

TEST_CASE("symptoms: created per (kind, node, key) and merged: count, first, last, first fields") {
  auto program = program_for(kBase + kSymptoms);
  auto v = run(program, context({"node-01", "node-02"}),
               {
                   text("node-01", "app", kT0 + 10 * kSec, "ERR 7 dev=a"),
                   text("node-01", "app", kT0 + 5 * kSec, "ERR 3 dev=a"),
                   text("node-01", "app", kT0 + 20 * kSec, "ERR 9 dev=b"),
                   text("node-02", "app", kT0, "ERR 1 dev=a"),
               });
  // Sorted by id.
  CHECK(ids(v) == std::vector<std::string>{"app.failure@node-01#a", "app.failure@node-01#b", "app.failure@node-02#a"});
  const Symptom& a = symptom(v, "app.failure@node-01#a");
  CHECK(a.kind_name == "app.failure");
  CHECK(a.node == "node-01");
  CHECK(a.key == "a");
  CHECK_FALSE(a.control_plane);
  CHECK(a.count == 2);
  CHECK(a.first == kT0 + 5 * kSec);
  CHECK(a.last == kT0 + 10 * kSec);
  CHECK(a.rule == "ErrSymptom");
  CHECK(a.state == SymptomState::Active);
  // Fields, priority and summary come from the first creation, i.e. the
  // earliest evidence in canonical order, not from the first observation given.
  CHECK(field(a, "first_code").i == 3);
  CHECK(a.priority == 3);
  CHECK(a.summary == "error 3 on node-01/a");
  REQUIRE(a.evidence.size() == 2);
  CHECK(a.evidence_total == 2);
  CHECK(a.evidence[0].text == "ERR 3 dev=a");
  CHECK(a.evidence[0].ts == kT0 + 5 * kSec);
  CHECK(a.evidence[0].ts_origin == "observation");
  CHECK(a.evidence[0].host == "node-01");
  CHECK(a.evidence[0].source == "app");
  CHECK(a.evidence[1].text == "ERR 7 dev=a");
  CHECK(symptom(v, "app.failure@node-02#a").count == 1);
  CHECK(v.affected_nodes == std::vector<std::string>{"node-01", "node-02"});
  // Nothing classified and the job failed.
  CHECK(v.outcome.status == "unattributed");
}

TEST_CASE("symptoms: evidence is capped at 20 items, the earliest kept, all counted") {
  auto program = program_for(kBase + kSymptoms);
  std::vector<Observation> obs;
  for (int i = 24; i >= 0; --i) obs.push_back(text("node-01", "app", kT0 + i * kSec, "ERR 1 dev=c #" + std::to_string(i)));
  auto v = run(program, context({"node-01"}), obs);
  const Symptom& s = symptom(v, "app.failure@node-01#c");
  CHECK(s.count == 25);
  CHECK(s.evidence_total == 25);
  REQUIRE(s.evidence.size() == 20);
  for (size_t i = 0; i < s.evidence.size(); ++i) {
    CAPTURE(i);
    CHECK(s.evidence[i].ts == kT0 + static_cast<int64_t>(i) * kSec);
  }
  CHECK(s.first == kT0);
  CHECK(s.last == kT0 + 24 * kSec);
}

TEST_CASE("group by ... within: bursts split where consecutive items are more than D apart") {
  auto program = program_for(kBase + R"attr(
rule Burst stage symptoms {
  for e: event app.err
  group by e.node within 30s
  symptom app.burst key str(first_ts()) { n: count(), devs: values(e.dev), codes: distinct(e.code), t0: first_ts(), t1: last_ts(), summary: "burst on {e.node} from {e.dev}" }
}
)attr");
  auto v = run(program, context({"node-01", "node-02"}),
               {
                   text("node-01", "app", kT0, "ERR 1 dev=b"),
                   text("node-01", "app", kT0 + 30 * kSec, "ERR 2 dev=a"),   // exactly 30s later: same burst
                   text("node-01", "app", kT0 + 61 * kSec, "ERR 2 dev=a"),   // 31s later: a new burst
                   text("node-01", "app", kT0 + 70 * kSec, "ERR 2 dev=a"),
                   text("node-02", "app", kT0 + 5 * kSec, "ERR 4 dev=z"),
               });
  CHECK(ids(v) == std::vector<std::string>{"app.burst@node-01#2026-01-01T10:00:00Z", "app.burst@node-01#2026-01-01T10:01:01Z",
                                           "app.burst@node-02#2026-01-01T10:00:05Z"});
  const Symptom& first = symptom(v, "app.burst@node-01#2026-01-01T10:00:00Z");
  CHECK(field(first, "n").i == 2);
  CHECK(field(first, "devs").s == "a,b");  // distinct values, sorted
  CHECK(field(first, "codes").i == 2);
  CHECK(field(first, "t0").i == kT0);
  CHECK(field(first, "t1").i == kT0 + 30 * kSec);
  CHECK(first.count == 2);
  CHECK(first.evidence.size() == 2);
  // The group's first item stands for `e`.
  CHECK(first.summary == "burst on node-01 from b");
  const Symptom& second = symptom(v, "app.burst@node-01#2026-01-01T10:01:01Z");
  CHECK(field(second, "n").i == 2);
  CHECK(field(second, "devs").s == "a");
  CHECK(field(second, "codes").i == 1);
  CHECK(field(symptom(v, "app.burst@node-02#2026-01-01T10:00:05Z"), "n").i == 1);
}

TEST_CASE("group by without within: one group per key") {
  auto program = program_for(kBase + R"attr(
rule PerDev stage symptoms {
  for e: event app.err
  group by e.dev
  symptom app.dev on job key e.dev { n: count(), nodes: values(e.node) }
}
)attr");
  auto v = run(program, context({"node-01", "node-02"}),
               {
                   text("node-01", "app", kT0, "ERR 1 dev=a"),
                   text("node-02", "app", kT0 + 3600 * kSec, "ERR 1 dev=a"),
                   text("node-02", "app", kT0 + 10 * kSec, "ERR 1 dev=b"),
               });
  CHECK(ids(v) == std::vector<std::string>{"app.dev@job#a", "app.dev@job#b"});
  const Symptom& a = symptom(v, "app.dev@job#a");
  CHECK(field(a, "n").i == 2);
  CHECK(field(a, "nodes").s == "node-01,node-02");
  CHECK(a.node.empty());
  // Job-level symptoms make no node "affected" by themselves.
  CHECK(v.affected_nodes.empty());
}

TEST_CASE("queries: on same node / on other nodes, and within D before X") {
  // In a stream of its own, so it cannot inherit a time from a timed line.
  Observation untimed_elsewhere = text("node-03", "app", std::nullopt, "ERR 7 dev=untimed");
  untimed_elsewhere.file = "untimed.log";
  auto program = program_for(kBase + R"attr(
rule Context stage symptoms {
  for f: event hw.fault
  symptom hw.context {
    same_before: count(y: event app.err on same node within 30s before f),
    any_after: count(y: event app.err within 30s after f),
    other: count(y: event app.err on other nodes),
    other_nodes: nodes(y: event app.err on other nodes),
    around: count(y: event app.err on same node within 1s around f),
    latest_code: max(y: event app.err on same node, y.code)
  }
}
)attr");
  auto v = run(program, context({"node-01", "node-02", "node-03"}),
               {
                   text("node-01", "kernel", kT0 + 100 * kSec, "FAULT ecc"),
                   text("node-01", "app", kT0 + 69 * kSec, "ERR 1 dev=a"),    // 31s before: outside
                   text("node-01", "app", kT0 + 70 * kSec, "ERR 2 dev=a"),    // exactly 30s before
                   text("node-01", "app", kT0 + 100 * kSec, "ERR 3 dev=a"),   // same instant: before and after
                   text("node-01", "app", kT0 + 101 * kSec, "ERR 4 dev=a"),   // 1s after
                   text("node-02", "app", kT0 + 90 * kSec, "ERR 5 dev=a"),    // other node
                   text("node-03", "app", kT0 + 131 * kSec, "ERR 6 dev=a"),   // other node, 31s after
                   untimed_elsewhere,                                         // no time: never within
               });
  const Symptom& c = symptom(v, "hw.context@node-01");
  CHECK(field(c, "same_before").i == 2);
  CHECK(field(c, "any_after").i == 2);
  CHECK(field(c, "other").i == 3);
  CHECK(field(c, "other_nodes").i == 2);
  CHECK(field(c, "around").i == 2);
  CHECK(field(c, "latest_code").i == 4);
}

TEST_CASE("demote over other nodes records the rule, the reason and the cause") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule Cascade stage final {
  for c: symptom hw.fault
  demote v: symptom app.failure on other nodes because "downstream of the {c.what} fault on {c.node} (was {v.summary})"
}
)attr");
  auto v = run(program, context({"node-01", "node-02", "node-03"}),
               {
                   text("node-01", "kernel", kT0, "FAULT ecc"),
                   text("node-01", "app", kT0 + 5 * kSec, "ERR 1 dev=a"),
                   text("node-02", "app", kT0 + 6 * kSec, "ERR 2 dev=a"),
                   text("node-03", "app", kT0 + 7 * kSec, "ERR 3 dev=b"),
               });
  const Symptom& same = symptom(v, "app.failure@node-01#a");
  CHECK(same.state == SymptomState::Active);
  CHECK_FALSE(same.demoted_by.has_value());
  for (const char* id : {"app.failure@node-02#a", "app.failure@node-03#b"}) {
    CAPTURE(id);
    const Symptom& s = symptom(v, id);
    CHECK(s.state == SymptomState::Demoted);
    REQUIRE(s.demoted_by.has_value());
    CHECK(s.demoted_by->rule == "Cascade");
    CHECK(s.demoted_by->cause == "hw.fault@node-01");
    CHECK(s.demoted_by->reason.rfind("downstream of the ecc fault on node-01 (was error ", 0) == 0);
    CHECK_FALSE(s.scrubbed_by.has_value());
  }
  CHECK(symptom(v, "app.failure@node-02#a").demoted_by->reason == "downstream of the ecc fault on node-01 (was error 2 on node-02/a)");
  // Demoted symptoms still count as affecting their nodes (only scrubbed ones do not).
  CHECK(v.affected_nodes == std::vector<std::string>{"node-01", "node-02", "node-03"});
  // The trail says who did it.
  bool found = false;
  for (const auto& t : v.trail)
    if (t.rule == "Cascade" && t.action == "demote" && t.target == "app.failure@node-02#a") {
      found = true;
      CHECK(t.stage == "final");
      CHECK(t.detail.find("hw.fault@node-01") != std::string::npos);
    }
  CHECK(found);
}

TEST_CASE("demote on same node, within D before the cause - demote of the bound symptom has no cause") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule SameNode stage final {
  for c: symptom hw.fault
  demote v: symptom app.failure on same node within 30s before c because "just before the fault"
}
rule SelfDemote stage final {
  for s: symptom app.failure
  where s.key == "z"
  demote s because "never a cause"
}
)attr");
  auto v = run(program, context({"node-01", "node-02"}),
               {
                   text("node-01", "kernel", kT0 + 60 * kSec, "FAULT ecc"),
                   text("node-01", "app", kT0 + 30 * kSec, "ERR 1 dev=a"),   // 30s before: demoted
                   text("node-01", "app", kT0 + 29 * kSec, "ERR 1 dev=b"),   // 31s before: stays
                   text("node-01", "app", kT0 + 61 * kSec, "ERR 1 dev=c"),   // after: stays
                   text("node-02", "app", kT0 + 50 * kSec, "ERR 1 dev=a"),   // other node: stays
                   text("node-02", "app", kT0 + 50 * kSec, "ERR 1 dev=z"),
               });
  CHECK(symptom(v, "app.failure@node-01#a").state == SymptomState::Demoted);
  CHECK(symptom(v, "app.failure@node-01#a").demoted_by->cause == "hw.fault@node-01");
  CHECK(symptom(v, "app.failure@node-01#b").state == SymptomState::Active);
  CHECK(symptom(v, "app.failure@node-01#c").state == SymptomState::Active);
  CHECK(symptom(v, "app.failure@node-02#a").state == SymptomState::Active);
  const Symptom& z = symptom(v, "app.failure@node-02#z");
  CHECK(z.state == SymptomState::Demoted);
  REQUIRE(z.demoted_by.has_value());
  CHECK(z.demoted_by->rule == "SelfDemote");
  CHECK(z.demoted_by->reason == "never a cause");
  CHECK(z.demoted_by->cause.empty());
}

TEST_CASE("scrub marks noise - scrubbed symptoms leave play and do not make a node affected") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule OneOff stage scrub {
  for s: symptom app.failure
  where s.count == 1
  scrub s because "a single error is noise"
}
rule Classify stage outcome {
  for s: symptom app.failure
  classify s as software "app.failure"
}
)attr");
  auto v = run(program, context({"node-01", "node-02"}),
               {
                   text("node-01", "app", kT0, "ERR 1 dev=a"),
                   text("node-01", "app", kT0 + 1 * kSec, "ERR 1 dev=a"),
                   text("node-02", "app", kT0 + 2 * kSec, "ERR 1 dev=a"),
               });
  const Symptom& noise = symptom(v, "app.failure@node-02#a");
  CHECK(noise.state == SymptomState::Scrubbed);
  REQUIRE(noise.scrubbed_by.has_value());
  CHECK(noise.scrubbed_by->rule == "OneOff");
  CHECK(noise.scrubbed_by->reason == "a single error is noise");
  CHECK_FALSE(noise.demoted_by.has_value());
  // Symptom queries see only active symptoms: the scrubbed one is not classified.
  CHECK_FALSE(noise.classification.has_value());
  const Symptom& real = symptom(v, "app.failure@node-01#a");
  CHECK(real.state == SymptomState::Active);
  REQUIRE(real.classification.has_value());
  CHECK(*real.classification == std::make_pair(std::string("software"), std::string("app.failure")));
  CHECK(v.affected_nodes == std::vector<std::string>{"node-01"});
  CHECK(v.outcome.status == "attributed");
  CHECK(v.outcome.culprit_nodes == std::vector<std::string>{"node-01"});
}

TEST_CASE("set priority changes the bound symptom's priority") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule Bump stage final {
  for s: symptom app.failure
  where s.count >= 2
  set s.priority = s.priority * 10 + s.count
}
)attr");
  auto v = run(program, context({"node-01"}),
               {
                   text("node-01", "app", kT0, "ERR 4 dev=a"),
                   text("node-01", "app", kT0 + 1 * kSec, "ERR 4 dev=a"),
                   text("node-01", "app", kT0 + 2 * kSec, "ERR 6 dev=b"),
               });
  CHECK(symptom(v, "app.failure@node-01#a").priority == 42);
  CHECK(symptom(v, "app.failure@node-01#b").priority == 6);
}

// FeedOnPairs sees what Pair (an earlier rule) emitted, but never its own
// output while it runs: otherwise it would feed on itself forever.
TEST_CASE("derived events: emitted in early, carry the original evidence and the earliest time") {
  auto program = program_for(kBase + R"attr(
rule Pair stage early {
  for e: event app.err
  group by e.node, e.dev
  emit app.pair { n: count(), dev: e.dev }
}
rule PairSymptom stage symptoms {
  for p: event app.pair where p.n >= 2
  symptom app.paired key p.dev { summary: "{p.n} errors on {p.node}", at: p.ts }
}
rule FeedOnPairs stage early {
  for p: event app.pair
  emit app.pair { n: 0, dev: "loop" }
}
)attr");
  auto v = run(program, context({"node-01"}),
               {
                   text("node-01", "app", kT0 + 9 * kSec, "ERR 1 dev=a"),
                   text("node-01", "app", kT0 + 3 * kSec, "ERR 2 dev=a"),
                   text("node-01", "app", kT0 + 1 * kSec, "ERR 3 dev=b"),
               });
  CHECK(ids(v) == std::vector<std::string>{"app.paired@node-01#a"});
  const Symptom& s = symptom(v, "app.paired@node-01#a");
  CHECK(s.summary == "2 errors on node-01");
  CHECK(field(s, "at").i == kT0 + 3 * kSec);
  CHECK(s.first == kT0 + 3 * kSec);
  // The evidence is the log lines behind the derived event, not the event itself.
  REQUIRE(s.evidence.size() == 2);
  CHECK(s.evidence[0].text == "ERR 2 dev=a");
  CHECK(s.evidence[1].text == "ERR 1 dev=a");
}

TEST_CASE("temporal order: own times, then line order in one file, then inherited times; unorderable is neither") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule Stamped stage symptoms {
  for e: event app.err where e.dev == "stamp"
  symptom app.stamped at time("2026-01-01T10:05:00") { summary: "dated by its text" }
}
rule ByFault stage final {
  for c: symptom hw.fault
  demote v: symptom app.failure where v not before c - 30s because "not before the fault"
}
rule ByLine stage final {
  for c: symptom app.failure where c.key == "cause"
  demote v: symptom app.failure where v.key in ["early", "late", "far"] and v after c because "after the cause"
}
rule Neither stage final {
  for v: symptom app.failure where v.key == "far"
  where none(c: symptom hw.fault where v before c or v not before c or v after c or v not after c)
  set v.priority = 99
}
rule AfterTheEnd stage final {
  for v: symptom app.failure where v.key == "b"
  where v after workload.end - 2h and v before workload.end
  set v.priority = 98
}
)attr");
  auto v = run(program, context({"node-01", "node-02", "node-03", "node-04", "node-05"}),
               {
                   text("node-01", "kernel", kT0 + 60 * kSec, "FAULT ecc"),
                   text("node-01", "app", kT0 + 40 * kSec, "ERR 1 dev=a"),  // own time 20s before: demoted
                   text("node-02", "app", kT0 + 20 * kSec, "ERR 1 dev=b"),  // own time 40s before: stays
                   numbered(text("node-03", "app", std::nullopt, "2026-01-01T10:00:50Z step 812"), 1),
                   numbered(text("node-03", "app", std::nullopt, "ERR 1 dev=i"), 2),  // inherits 10:00:50: demoted
                   numbered(text("node-04", "app", std::nullopt, "ERR 1 dev=early"), 1),  // one untimed file: line order
                   numbered(text("node-04", "app", std::nullopt, "ERR 1 dev=cause"), 2),
                   numbered(text("node-04", "app", std::nullopt, "ERR 1 dev=late"), 3),
                   numbered(text("node-05", "app", std::nullopt, "ERR 1 dev=far"), 1),  // no time, another file: unorderable
                   numbered(text("node-05", "app", std::nullopt, "ERR 1 dev=stamp"), 2),
               });
  CHECK(symptom(v, "app.failure@node-01#a").state == SymptomState::Demoted);
  CHECK(symptom(v, "app.failure@node-02#b").state == SymptomState::Active);
  CHECK(symptom(v, "app.failure@node-03#i").state == SymptomState::Demoted);
  CHECK(symptom(v, "app.failure@node-04#early").state == SymptomState::Active);
  CHECK(symptom(v, "app.failure@node-04#late").state == SymptomState::Demoted);
  REQUIRE(symptom(v, "app.failure@node-04#late").demoted_by.has_value());
  CHECK(symptom(v, "app.failure@node-04#late").demoted_by->rule == "ByLine");
  // Cannot be ordered: not demoted, and none of the four relations holds.
  CHECK(symptom(v, "app.failure@node-05#far").state == SymptomState::Active);
  CHECK(symptom(v, "app.failure@node-05#far").priority == 99);
  // A time expression as the anchor.
  CHECK(symptom(v, "app.failure@node-02#b").priority == 98);
  // `at` dates the evidence by the instant its text states, as the symptom's own time.
  const Symptom& st = symptom(v, "app.stamped@node-05");
  CHECK(st.first == kT0 + 300 * kSec);
  CHECK(st.own_first == kT0 + 300 * kSec);
  CHECK(st.place == "node-05/app/");  // host/source/file; in-memory observations have no file name
  CHECK(st.place_line == 2);
  // An inherited time is a time, but not the symptom's own.
  const Symptom& inh = symptom(v, "app.failure@node-03#i");
  CHECK(inh.first == kT0 + 50 * kSec);
  CHECK(!inh.own_first.has_value());
}

TEST_CASE("temporal order: unanchored dmesg boot seconds measure gaps within their file") {
  auto program = program_for(R"attr(
extractor K from kernel {
  match /K (?<name>\w+)/
  emit k.line { name: name }
  test { line "K a" expect k.line { name: "a" } }
  test { line "x" expect none }
}
rule S stage symptoms {
  for e: event k.line
  symptom k.s key e.name priority 50 { summary: "{e.name}" }
}
rule D stage final {
  for x: symptom k.s where x.key == "cause"
  demote y: symptom k.s where y.key != "cause" and y not before x - 5s because "within 5 s before it"
}
)attr");
  auto v = run(program, context({"node-01"}),
               {
                   numbered(text("node-01", "kernel", std::nullopt, "[ 1000.000000] K early"), 1),  // 10 s before: stays
                   numbered(text("node-01", "kernel", std::nullopt, "[ 1007.500000] K near"), 2),   // 2.5 s before: demoted
                   numbered(text("node-01", "kernel", std::nullopt, "[ 1010.000000] K cause"), 3),
                   numbered(text("node-01", "kernel", std::nullopt, "K unstamped"), 4),            // after, by line order
               });
  CHECK(symptom(v, "k.s@node-01#early").state == SymptomState::Active);
  CHECK(symptom(v, "k.s@node-01#near").state == SymptomState::Demoted);
  CHECK(symptom(v, "k.s@node-01#unstamped").state == SymptomState::Demoted);
  CHECK(!symptom(v, "k.s@node-01#cause").first.has_value());  // no wall time: boot seconds are not a time
}

TEST_CASE("workload records: scheduler and node names") {
  auto program = program_for(kBase + R"attr(
rule Names stage symptoms {
  for e: event app.err
  where contains("," + workload.node_names + ",", "," + e.node + ",")
  symptom app.member { summary: "{workload.scheduler}: {workload.node_names}" }
}
)attr");
  auto ctx = context({"node-02", "node-01"});
  ctx.scheduler = "kubernetes";
  auto v = run(program, ctx, {text("node-01", "app", kT0, "ERR 1 dev=a"), text("ctl-01", "app", kT0, "ERR 1 dev=a")});
  CHECK(ids(v) == std::vector<std::string>{"app.member@node-01"});
  CHECK(symptom(v, "app.member@node-01").summary == "kubernetes: node-01,node-02");
}

TEST_CASE("symptoms: the sources of all evidence are kept, not only of the quoted lines") {
  // Recovery asks whether anything but the job's output backs a claim
  // (runtime/recovery.h); the 21st line may be the only kernel one.
  auto program = program_for(kBase + R"attr(
rule AnyLine stage symptoms {
  for e: event *
  symptom n.line { summary: "a line on {e.node}" }
}
)attr");
  std::vector<Observation> obs;
  for (int i = 0; i < 25; ++i) obs.push_back(text("node-01", "app", kT0 + i * kSec, "ERR 1 dev=c"));
  obs.push_back(text("node-01", "kernel", kT0 + 100 * kSec, "FAULT ecc"));
  auto v = run(program, context({"node-01"}), obs);
  const Symptom& s = symptom(v, "n.line@node-01");
  REQUIRE(s.evidence.size() == 20);
  CHECK(std::none_of(s.evidence.begin(), s.evidence.end(), [](const Evidence& e) { return e.source == "kernel"; }));
  CHECK(s.evidence_sources == std::vector<std::string>{"app", "kernel"});
}

TEST_CASE("budget: a run out of evaluation steps stops, is unattributed and names the rule") {
  // Issue 38: nested scans over many events ran for minutes. The classify
  // rule after the nested one would attribute if evaluation went on.
  auto program = program_for(kBase + kSymptoms + R"attr(
rule Nested stage symptoms {
  for e: event app.err
  where exists(a: event app.err where exists(b: event app.err where b.code == a.code + e.code + 1000000))
  symptom n.nested { summary: "nested" }
}
rule ClassifyFault stage outcome {
  for s: symptom hw.fault
  classify s as hardware "gpu.fault"
}
)attr");
  std::vector<Observation> obs;
  for (int i = 0; i < 60; ++i) obs.push_back(text("node-01", "app", kT0 + i * kSec, "ERR " + std::to_string(i) + " dev=a"));
  obs.push_back(text("node-01", "kernel", kT0 + 100 * kSec, "FAULT ecc"));
  DiagnoseRequest req;
  req.context = context({"node-01"});
  req.observations = obs;
  DiagnoseOptions opt;
  opt.threads = 1;
  DiagnoseTimings timings;
  opt.timings = &timings;
  Verdict full;
  std::string error;
  REQUIRE(diagnose(program, DiagnoseRequest(req), opt, full, error));
  CHECK(full.outcome.status == "attributed");
  const uint64_t needed = timings.eval_steps;
  CHECK(needed > 3600);  // 60 x 60 inner scans at least
  // The default budget is the documented one for the events received.
  CHECK(timings.events == 61);
  CHECK(timings.eval_budget == limits::kEvalStepsBase + 61 * limits::kEvalStepsPerEvent);
  CHECK(std::none_of(full.coverage.warnings.begin(), full.coverage.warnings.end(),
                     [](const std::string& w) { return w.find("eval_steps") != std::string::npos; }));

  opt.eval_steps = needed / 2;
  Verdict cut;
  REQUIRE(diagnose(program, DiagnoseRequest(req), opt, cut, error));
  CHECK(cut.outcome.status == "unattributed");
  CHECK(cut.outcome.candidates.empty());
  CHECK(timings.eval_steps <= needed / 2 + 1);
  CHECK(timings.eval_budget == needed / 2);
  const auto w = std::find_if(cut.coverage.warnings.begin(), cut.coverage.warnings.end(),
                              [](const std::string& x) { return x.find("eval_steps") != std::string::npos; });
  REQUIRE(w != cut.coverage.warnings.end());
  CHECK(w->find("limit eval_steps exceeded: rule Nested ran out of evaluation steps") == 0);
  CHECK(w->find("at rule Nested") != std::string::npos);
  // The warning gives the budget that was used, not a fixed figure.
  CHECK(w->find(fmt::format("on 61 events; evaluation stopped and nothing is attributed (at most {})", needed / 2)) !=
        std::string::npos);
}

TEST_CASE("budget: it grows with the events, so the same rule on more evidence is not cut short sooner") {
  // A rule whose work is linear in the events (an indexed join): the
  // default budget, limits::eval_steps_for(events), is what each run gets,
  // and it holds on 10 and on 2,000 events alike.
  auto program = program_for(kBase + kSymptoms + R"attr(
rule Count stage symptoms {
  for e: event app.err
  where count(a: event app.err on same node where a.code == e.code) >= 1
  symptom n.seen { summary: "seen" }
}
)attr");
  for (int n : {10, 2000}) {
    std::vector<Observation> obs;
    for (int i = 0; i < n; ++i) obs.push_back(text("node-01", "app", kT0 + i * kSec, "ERR " + std::to_string(i) + " dev=a"));
    DiagnoseRequest req;
    req.context = context({"node-01"});
    req.observations = obs;
    DiagnoseOptions opt;
    opt.threads = 1;
    DiagnoseTimings timings;
    opt.timings = &timings;
    Verdict v;
    std::string error;
    REQUIRE(diagnose(program, std::move(req), opt, v, error));
    CAPTURE(n);
    CHECK(timings.eval_budget == limits::eval_steps_for(static_cast<uint64_t>(n)));
    CHECK(timings.eval_steps < timings.eval_budget);
    CHECK(std::none_of(v.coverage.warnings.begin(), v.coverage.warnings.end(),
                       [](const std::string& w) { return w.find("eval_steps") != std::string::npos; }));
  }
}

TEST_CASE("classify: one class is attributed - culprits exclude control-plane hosts and job-level symptoms") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule Systemic stage aggregate {
  where exists(s: symptom hw.fault)
  symptom hw.systemic on job { summary: "faults somewhere" }
}
rule ClassifyFault stage outcome {
  for s: symptom hw.fault
  classify s as hardware "gpu.fault"
}
rule ClassifySystemic stage outcome {
  for s: symptom hw.systemic
  classify s as hardware "gpu.fault"
}
)attr");
  auto v = run(program, context({"node-01", "node-02"}),
               {
                   text("node-02", "kernel", kT0 + 10 * kSec, "FAULT ecc"),
                   text("ctl", "kernel", kT0 + 20 * kSec, "FAULT fan"),  // not a workload node: control plane
                   text("node-01", "app", kT0 + 30 * kSec, "ERR 1 dev=a"),
               });
  const Symptom& ctl = symptom(v, "hw.fault@ctl");
  CHECK(ctl.control_plane);
  CHECK(ctl.classification.has_value());
  CHECK(symptom(v, "hw.systemic@job").classification.has_value());
  CHECK(v.outcome.status == "attributed");
  CHECK(v.outcome.domain == "hardware");
  CHECK(v.outcome.sub_domain == "gpu.fault");
  CHECK(v.outcome.culprit_nodes == std::vector<std::string>{"node-02"});
  CHECK(v.outcome.root_cause == "hw.fault@node-02");
  CHECK(v.outcome.root_cause_summary == "ecc fault on node-02");
  REQUIRE(v.outcome.candidates.size() == 1);
  CHECK(v.outcome.candidates[0].nodes == std::vector<std::string>{"node-02"});
  CHECK(v.outcome.candidates[0].symptoms ==
        std::vector<std::string>{"hw.fault@ctl", "hw.fault@node-02", "hw.systemic@job"});
  // Control-plane hosts are not workload nodes, so they are never "affected" either.
  CHECK(v.affected_nodes == std::vector<std::string>{"node-01", "node-02"});
  CHECK(v.coverage.control_plane_hosts == std::vector<std::string>{"ctl"});
}

TEST_CASE("classify ... on job: the job's own class names no culprit node, only where it showed") {
  auto classified = [&](const char* modifier) {
    auto program = program_for(kBase + kSymptoms + std::string(R"attr(
rule ClassifyFailure stage outcome {
  for s: symptom app.failure
  classify s as software "app.failure" generic)attr") + modifier + "\n}\n");
    return run(program, context({"node-01", "node-02"}),
               {
                   text("node-02", "app", kT0 + 10 * kSec, "ERR 60 dev=a"),
                   text("node-01", "app", kT0 + 20 * kSec, "INFO all well"),
               });
  };
  auto on_node = classified("");
  CHECK(on_node.outcome.culprit_nodes == std::vector<std::string>{"node-02"});  // the single origin
  auto on_job = classified(" on job");
  CHECK(on_job.outcome.status == "attributed");
  CHECK(on_job.outcome.culprit_nodes.empty());
  REQUIRE(on_job.outcome.candidates.size() == 1);
  CHECK(on_job.outcome.candidates[0].on_job);
  CHECK(on_job.outcome.candidates[0].nodes.empty());
  CHECK(on_job.outcome.candidates[0].generic_nodes == std::vector<std::string>{"node-02"});
  CHECK(on_job.outcome.basis == on_node.outcome.basis);  // the origin reasoning is unchanged
  CHECK(symptom(on_job, "app.failure@node-02#a").class_on_job);
}

TEST_CASE("classify: the root cause is the earliest classified symptom") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule ClassifyFault stage outcome {
  for s: symptom hw.fault
  classify s as hardware "gpu.fault"
}
)attr");
  auto v = run(program, context({"node-01", "node-02", "node-03"}),
               {
                   text("node-03", "kernel", kT0 + 30 * kSec, "FAULT c"),
                   text("node-02", "kernel", kT0 + 10 * kSec, "FAULT b"),
                   text("node-01", "kernel", kT0 + 20 * kSec, "FAULT a"),
               });
  CHECK(v.outcome.status == "attributed");
  CHECK(v.outcome.culprit_nodes == std::vector<std::string>{"node-01", "node-02", "node-03"});
  CHECK(v.outcome.root_cause == "hw.fault@node-02");
}

TEST_CASE("classify: several classes are ambiguous, each listed as a candidate") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule ClassifyFault stage outcome {
  for s: symptom hw.fault
  classify s as hardware "gpu.fault"
}
rule ClassifyErr stage outcome {
  for s: symptom app.failure
  classify s as software "app.crash"
}
rule Again stage outcome {
  for s: symptom app.failure
  classify s as user "ignored"
}
)attr");
  auto v = run(program, context({"node-01", "node-02"}),
               {
                   text("node-01", "kernel", kT0, "FAULT ecc"),
                   text("node-02", "app", kT0 + 1 * kSec, "ERR 1 dev=a"),
               });
  CHECK(v.outcome.status == "ambiguous");
  CHECK(v.outcome.domain.empty());
  CHECK(v.outcome.culprit_nodes.empty());
  CHECK(v.outcome.root_cause.empty());
  REQUIRE(v.outcome.candidates.size() == 2);
  CHECK(v.outcome.candidates[0].domain == "hardware");
  CHECK(v.outcome.candidates[0].nodes == std::vector<std::string>{"node-01"});
  CHECK(v.outcome.candidates[1].domain == "software");
  CHECK(v.outcome.candidates[1].sub_domain == "app.crash");
  CHECK(v.outcome.candidates[1].symptoms == std::vector<std::string>{"app.failure@node-02#a"});
  // The first classification of a symptom sticks.
  CHECK(symptom(v, "app.failure@node-02#a").classification->first == "software");
}

TEST_CASE("outcome without classified symptoms: unattributed or no_failure by terminal state") {
  auto program = program_for(kBase + kSymptoms);
  const std::vector<Observation> errors = {text("node-01", "app", kT0, "ERR 1 dev=a")};
  CHECK(run(program, context({"node-01"}, "FAILED", 1), errors).outcome.status == "unattributed");
  CHECK(run(program, context({"node-01"}, "COMPLETED", 0), errors).outcome.status == "no_failure");
  CHECK(run(program, context({"node-01"}, "COMPLETED", 0), {}).outcome.status == "no_failure");
  CHECK(run(program, context({"node-01"}, "COMPLETED", 3), {}).outcome.status == "unattributed");
  CHECK(run(program, context({"node-01"}, "TIMEOUT", std::nullopt), {}).outcome.status == "unattributed");
  auto v = run(program, context({"node-01"}, "FAILED", 1), {});
  CHECK(v.outcome.domain.empty());
  CHECK(v.outcome.culprit_nodes.empty());
  CHECK(v.outcome.candidates.empty());
}

// docs/language.md §1: without a terminal state nothing says the workload
// completed, so a clean log is not evidence of success: unattributed.
TEST_CASE("outcome: no terminal state and no symptom is unattributed, not no_failure") {
  auto program = program_for(kBase + kSymptoms);
  WorkloadContext ctx = context({"node-01"});
  ctx.terminal = TerminalState{};
  auto v = run(program, ctx, {text("node-01", "app", kT0, "all good")});
  CHECK(v.symptoms.empty());
  CHECK(v.outcome.status == "unattributed");
}

TEST_CASE("post_outcome: set outcome overrules the computed outcome") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule ClassifyFault stage outcome {
  for s: symptom hw.fault
  classify s as hardware "gpu.fault"
}
rule OomKill stage post_outcome {
  where outcome.status == "unattributed" and terminal.exit_code == 137
  set outcome attributed user "oom.killed" because "exit code {terminal.exit_code} on {workload.nodes} node(s)"
}
rule Completed stage post_outcome {
  where terminal.state == "COMPLETED" and outcome.culprits > 0
  set outcome no_failure because "the run completed"
}
)attr");
  SUBCASE("unattributed, exit 137 -> attributed to the user") {
    auto v = run(program, context({"node-01", "node-02"}, "FAILED", 137), {text("node-01", "app", kT0, "ERR 1 dev=a")});
    CHECK(v.outcome.status == "attributed");
    CHECK(v.outcome.domain == "user");
    CHECK(v.outcome.sub_domain == "oom.killed");
    CHECK(v.outcome.overridden_by == "OomKill");
    CHECK(v.outcome.override_reason == "exit code 137 on 2 node(s)");
  }
  SUBCASE("attributed but completed -> no_failure, without culprits or root cause") {
    auto v = run(program, context({"node-01"}, "COMPLETED", 0), {text("node-01", "kernel", kT0, "FAULT ecc")});
    CHECK(v.outcome.status == "no_failure");
    CHECK(v.outcome.domain.empty());
    CHECK(v.outcome.sub_domain.empty());
    CHECK(v.outcome.culprit_nodes.empty());
    CHECK(v.outcome.root_cause.empty());
    CHECK(v.outcome.overridden_by == "Completed");
    CHECK(v.outcome.override_reason == "the run completed");
    // The classification itself stays on the symptom.
    CHECK(symptom(v, "hw.fault@node-01").classification.has_value());
  }
  SUBCASE("no rule applies: the computed outcome stands") {
    auto v = run(program, context({"node-01"}, "FAILED", 1), {text("node-01", "kernel", kT0, "FAULT ecc")});
    CHECK(v.outcome.status == "attributed");
    CHECK(v.outcome.overridden_by.empty());
    CHECK(v.outcome.culprit_nodes == std::vector<std::string>{"node-01"});
  }
}

TEST_CASE("metric observations become metric.sample events") {
  auto program = program_for(kBase + R"attr(
rule XidMetric stage symptoms {
  for m: event metric.sample
  where m.name == "DCGM_FI_DEV_XID_ERRORS" and m.value > 0.0
  symptom gpu.xid_metric key m.labels { value: m.value, summary: "{m.name} = {m.value} ({m.labels}) on {m.node}" }
}
)attr");
  auto v = run(program, context({"node-01"}),
               {
                   metric("node-01", kT0, "DCGM_FI_DEV_XID_ERRORS", 79, "gpu=3"),
                   metric("node-01", kT0, "DCGM_FI_DEV_XID_ERRORS", 0, "gpu=4"),
                   metric("node-01", kT0, "DCGM_FI_DEV_GPU_TEMP", 90, "gpu=3"),
                   metric("node-01", kT0 - 2 * 3600 * kSec, "DCGM_FI_DEV_XID_ERRORS", 48, "gpu=5"),  // out of scope
               });
  CHECK(ids(v) == std::vector<std::string>{"gpu.xid_metric@node-01#gpu=3"});
  const Symptom& s = symptom(v, "gpu.xid_metric@node-01#gpu=3");
  CHECK(field(s, "value").f == doctest::Approx(79.0));
  CHECK(s.summary == "DCGM_FI_DEV_XID_ERRORS = 79 (gpu=3) on node-01");
  REQUIRE(s.evidence.size() == 1);
  CHECK(s.evidence[0].source == "dcgm");
  CHECK(s.evidence[0].ts_origin == "observation");
  CHECK(s.evidence[0].text == "DCGM_FI_DEV_XID_ERRORS{gpu=3} 79");
}

TEST_CASE("coverage: sources and nodes with and without data - covered() in rules") {
  auto program = program_for(kBase + R"attr(
rule Blind stage symptoms {
  for e: event app.err
  where not covered(kernel, e.node)
  symptom app.blind { share: coverage(kernel), summary: "no kernel log from {e.node}" }
}
)attr");
  auto v = run(program, context({"node-01", "node-02", "node-03"}),
               {
                   text("node-01", "kernel", kT0, "nothing"),
                   text("node-01", "app", kT0, "ERR 1 dev=a"),
                   text("node-02", "app", kT0, "ERR 1 dev=a"),
               });
  CHECK(ids(v) == std::vector<std::string>{"app.blind@node-02"});
  CHECK(field(symptom(v, "app.blind@node-02"), "share").f == doctest::Approx(1.0 / 3));
  const auto& kernel = v.coverage.sources.at("kernel");
  CHECK(kernel.nodes_expected == 3);
  CHECK(kernel.nodes_with_data == std::vector<std::string>{"node-01"});
  CHECK(kernel.nodes_missing == std::vector<std::string>{"node-02", "node-03"});
  CHECK(v.coverage.sources.at("app").events == 2);
  CHECK(v.coverage.nodes_without_logs == std::vector<std::string>{"node-03"});
  // Every source the catalog reads is reported, with or without data; one
  // that no extractor reads and no data came from is not (the list is the
  // catalog's, not a fixed one).
  for (const char* s : {"app", "kernel"}) CHECK(v.coverage.sources.count(s) == 1);
  CHECK(v.coverage.sources.count("fabricmanager") == 0);
  auto silent = run(program, context({"node-01"}), {text("node-01", "app", kT0, "ERR 1 dev=a")});
  REQUIRE(silent.coverage.sources.count("kernel") == 1);
  CHECK(silent.coverage.sources.at("kernel").nodes_missing == std::vector<std::string>{"node-01"});
  bool warned = false;
  for (const auto& w : v.coverage.warnings) warned = warned || w.find("no logs at all from 1 of 3 nodes: node-03") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("determinism: shuffled observations and 1 or 2 threads give the same verdict JSON") {
  auto program = program_for(kBase + kSymptoms + R"attr(
rule Burst stage early {
  for e: event app.err
  group by e.node within 10s
  emit app.burst { n: count(), devs: values(e.dev) }
}
rule BurstSymptom stage symptoms {
  for b: event app.burst
  symptom app.burst key str(b.ts) { n: b.n, devs: b.devs, summary: "{b.n} errors on {b.node}" }
}
rule Cascade stage final {
  for c: symptom hw.fault
  demote v: symptom app.* on other nodes because "after the fault on {c.node}"
}
rule ClassifyFault stage outcome {
  for s: symptom hw.fault
  classify s as hardware "gpu.fault"
}
)attr");
  std::vector<Observation> obs;
  for (int n = 1; n <= 4; ++n) {
    const std::string node = "node-0" + std::to_string(n);
    for (int i = 0; i < 12; ++i) {
      const int64_t t = kT0 + (i * 7 + n) * kSec;
      obs.push_back(text(node, "app", t, "ERR " + std::to_string(i % 5) + " dev=" + std::string(1, static_cast<char>('a' + i % 3))));
    }
    // Untimed lines: they inherit times by their order in the stream.
    obs.push_back(text(node, "app", std::nullopt, "ERR 9 dev=u" + std::to_string(n)));
    obs.push_back(text(node, "app", std::nullopt, "ERR 8 dev=v" + std::to_string(n)));
    obs.push_back(metric(node, kT0 + n * kSec, "DCGM_FI_DEV_GPU_TEMP", 60 + n, "gpu=0"));
  }
  obs.push_back(text("node-03", "kernel", kT0 + 40 * kSec, "FAULT ecc"));
  obs.push_back(text("node-03", "kernel", std::nullopt, "FAULT untimed"));
  obs.push_back(text("ctl", "scheduler", kT0, "job started"));

  const WorkloadContext ctx = context({"node-01", "node-02", "node-03", "node-04"});
  const std::string reference = verdict_to_json_text(run(program, ctx, obs, 1), true);
  CHECK(reference.find("\"status\": \"attributed\"") != std::string::npos);
  std::mt19937 rng(20260101);
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    std::shuffle(obs.begin(), obs.end(), rng);
    const unsigned threads = round % 2 == 0 ? 2 : 1;
    CAPTURE(threads);
    const std::string again = verdict_to_json_text(run(program, ctx, obs, threads), true);
    CHECK(again == reference);
  }
}

// Regression: metric observations of one host and source taken at the same instant
// are equal in the engine's canonical order (time, host, source, file, line,
// producer, kind): in-memory metric samples all have file "" and line 0, and
// the name, value and labels are not compared. std::sort then leaves them in
// arrival order, so which sample creates a symptom (and supplies its fields and
// summary), and the order of its evidence, depend on the order the samples
// were given in (runtime/engine.cpp event_canonical_less; runtime/diagnose.cpp
// metric events). DCGM reports every GPU of a node at the same timestamp, so
// this is the common case. Repro: two samples {"host":"node-01","source":"dcgm",
// "ts":"2026-01-01T10:00:00Z","metric":"DCGM_FI_DEV_XID_ERRORS","value":79,
// "labels":{"gpu":"3"}} and the same with value 48, gpu 5, fed to a rule
// `symptom gpu.xid { value: m.value }` in either order give different verdicts.
TEST_CASE("determinism: simultaneous metric samples do not depend on arrival order") {
  auto program = program_for(kBase + R"attr(
rule XidMetric stage symptoms {
  for m: event metric.sample
  symptom gpu.xid { value: m.value, gpu: m.labels, summary: "XID {m.value} on {m.labels}" }
}
)attr");
  const WorkloadContext ctx = context({"node-01"});
  const Observation a = metric("node-01", kT0, "DCGM_FI_DEV_XID_ERRORS", 79, "gpu=3");
  const Observation b = metric("node-01", kT0, "DCGM_FI_DEV_XID_ERRORS", 48, "gpu=5");
  const std::string ab = verdict_to_json_text(run(program, ctx, {a, b}), false);
  const std::string ba = verdict_to_json_text(run(program, ctx, {b, a}), false);
  CHECK(ab == ba);
}

TEST_CASE("coverage: collector reports reach the verdict sorted, and every one that is not ok is a warning") {
  auto program = program_for(kBase + kSymptoms);
  DiagnoseRequest req;
  req.context = context({"node-01", "node-02"});
  req.observations = {text("node-01", "app", kT0, "ERR 1 dev=a")};
  CollectorReport loki;
  loki.collector = "loki";
  loki.source = "app";
  loki.status = "partial";
  loki.reason = "query timed out for node-02";
  loki.nodes_expected = {"node-02", "node-01"};
  loki.nodes_covered = {"node-01"};
  loki.errors = {"z: second", "a: first"};
  CollectorReport files;
  files.collector = "files";
  files.source = "kernel";
  files.status = "ok";
  files.nodes_expected = {"node-01", "node-02"};
  files.nodes_covered = {"node-01", "node-02"};
  req.collectors = {loki, files};
  DiagnoseOptions opt;
  opt.threads = 1;
  Verdict v;
  std::string error;
  REQUIRE(diagnose(program, std::move(req), opt, v, error));
  REQUIRE(v.coverage.collectors.size() == 2);
  CHECK(v.coverage.collectors[0].collector == "files");
  CHECK(v.coverage.collectors[1].collector == "loki");
  CHECK(v.coverage.collectors[1].nodes_expected == std::vector<std::string>{"node-01", "node-02"});
  CHECK(v.coverage.collectors[1].errors == std::vector<std::string>{"a: first", "z: second"});
  size_t warned = 0;
  for (const auto& w : v.coverage.warnings) {
    if (w == "collector loki (app): partial: query timed out for node-02") ++warned;
    CHECK(w.find("collector files") == std::string::npos);
  }
  CHECK(warned == 1);
  auto j = verdict_to_json(v, false);
  REQUIRE(j["coverage"].contains("collectors"));
  CHECK(j["coverage"]["collectors"][1]["status"] == "partial");
  // A verdict without collectors has no such key (bundles keep their shape).
  DiagnoseRequest plain;
  plain.context = context({"node-01"});
  Verdict w;
  REQUIRE(diagnose(program, std::move(plain), opt, w, error));
  CHECK_FALSE(verdict_to_json(w, false)["coverage"].contains("collectors"));
}
