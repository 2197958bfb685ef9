// The text report on hand-made verdicts: the cause block first, the cascade
// one line per (kind, reason), lines cut to the width (escape codes not
// counted), plural forms, and --cascade listing every symptom.
#include "runtime/verdict_text.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

using namespace culprit;

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

size_t columns(const std::string& s) {
  size_t n = 0;
  bool esc = false;
  for (unsigned char c : s) {
    if (c == 0x1b) esc = true;
    if (!esc) n += (c & 0xC0) != 0x80;
    if (esc && c == 'm') esc = false;
  }
  return n;
}

Symptom symptom(const std::string& kind, const std::string& node, int64_t count) {
  Symptom s;
  s.kind_name = kind;
  s.node = node;
  s.id = kind + "@" + node;
  s.count = count;
  s.summary = kind + " on " + node;
  Evidence e;
  e.host = node;
  e.file = "logs/" + node + "/app.log";
  e.line = 10;
  e.text = "a log line of " + kind + " with a long tail " + std::string(200, 'x');
  s.evidence = {e};
  s.evidence_total = count;
  return s;
}

Verdict attributed(int downstream_nodes) {
  Verdict v;
  v.workload.workload_id = "42";
  v.workload.scheduler = "slurm";
  v.workload.nodes = {"node-01"};
  v.workload.terminal.state = "FAILED";
  v.outcome.status = "attributed";
  v.outcome.domain = "hardware";
  v.outcome.sub_domain = "gpu.fallen_off_bus";
  v.outcome.culprit_nodes = {"node-01"};
  Symptom cause = symptom("gpu.fallen_off_bus", "node-01", 1);
  cause.classification = std::make_pair(std::string("hardware"), std::string("gpu.fallen_off_bus"));
  v.outcome.root_cause = cause.id;
  v.outcome.root_cause_summary = "GPU 0000:3b:00 fell off the bus on node-01";
  v.symptoms.push_back(cause);
  for (int i = 0; i < downstream_nodes; ++i) {
    std::string node = "node-0" + std::to_string(i + 2);
    v.workload.nodes.push_back(node);
    Symptom d = symptom("nccl.remote_error", node, 3);
    d.state = SymptomState::Demoted;
    d.demoted_by = StateChange{"Cascade", "downstream of the GPU on node-01", cause.id};
    v.symptoms.push_back(d);
  }
  v.engine.catalog_name = "culprit-stdlib";
  v.engine.catalog_version = "0.1.0";
  v.engine.catalog_digest = "sha256:0123456789abcdef";
  v.engine.catalog_parts = {{"culprit-stdlib", "0.1.0", "sha256:0"}, {"site", "0.0.1", "sha256:1"}};
  v.engine.evaluator = "jit";
  v.coverage.sources["app"].lines_read = 1;
  return v;
}

}  // namespace

TEST_CASE("text report: the cascade is one line per (kind, reason) with counts and nodes") {
  auto v = attributed(3);
  TextOptions opt;
  std::string r = verdict_to_text(v, opt);
  auto lines = lines_of(r);
  CHECK(lines[0] == "Workload 42 (slurm, 4 nodes, terminal state FAILED)");
  CHECK(lines[2] == "ROOT CAUSE  hardware / gpu.fallen_off_bus");
  CHECK(lines[3] == "  GPU 0000:3b:00 fell off the bus on node-01");
  CHECK(lines[4] == "  culprit nodes: node-01");
  CHECK(r.find("\nDownstream, demoted: 3 symptoms on 3 nodes\n"
               "  nccl.remote_error  ×9 on node-02, node-03, node-04: downstream of the GPU on node-01\n") != std::string::npos);
  // Every catalog part is named, and the last line is the recap.
  CHECK(r.find("catalog culprit-stdlib 0.1.0 + site 0.0.1 (sha256:0123456789ab), jit") != std::string::npos);
  CHECK(lines.back() == "verdict: attributed hardware / gpu.fallen_off_bus on node-01 (1 cause, 3 downstream)");
}

TEST_CASE("text report: the recommendation is one line under the culprit nodes, and every failure gets a next step") {
  auto v = attributed(1);
  v.recommendation.job.scope = "job";
  v.recommendation.job.action = "restart_excluding";
  v.recommendation.job.nodes = {"node-01"};
  RecommendedAction drain;
  drain.scope = "node";
  drain.node = "node-01";
  drain.action = "drain";
  RecommendedAction reset = drain;
  reset.action = "reset_gpu";
  reset.target = {{"pci", "0000:3b:00"}};
  v.recommendation.nodes = {drain, reset};
  auto lines = lines_of(verdict_to_text(v, {}));
  CHECK(lines[4] == "  culprit nodes: node-01");
  CHECK(lines[5] == "  next: restart the job without node-01; drain node-01; reset the GPU of node-01 (pci 0000:3b:00)");
  CHECK(lines.back() == "   next: restart the job without node-01; drain node-01; reset the GPU of node-01 (pci 0000:3b:00)");

  // One step per action and node: the targets of several entries merged.
  RecommendedAction link = drain, link2 = drain;
  link.action = link2.action = "inspect_link";
  link.target = {{"pci", "0000:97:00"}, {"links", "4,5"}};
  link2.target = {{"pci", "0000:ba:00"}};
  v.recommendation.nodes = {drain, link, link2};
  lines = lines_of(verdict_to_text(v, {}));
  CHECK(lines[5] == "  next: restart the job without node-01; drain node-01; inspect the links of node-01 (links 4,5; pci "
                    "0000:97:00, 0000:ba:00)");

  v.recommendation = Recommendation{};
  v.recommendation.job.action = "stop_fix_code";
  lines = lines_of(verdict_to_text(v, {}));
  CHECK(lines[5] == "  next: do not resubmit until its code changes");

  // Not attributed: nothing to act on, and the report says so rather than
  // leave the operator without a next step.
  v.outcome.status = "unattributed";
  v.recommendation = Recommendation{};
  v.recommendation.job.action = "none";
  CHECK(verdict_to_text(v, {}).find("\n  next: no action follows from this evidence; start from the symptoms below\n") != std::string::npos);
  v.outcome.status = "no_failure";
  std::string done = verdict_to_text(v, {});
  CHECK(done.find("\n  next: no action: the workload completed\n") != std::string::npos);
  CHECK(done.find("   next:") == std::string::npos);  // and no second one in the recap
}

TEST_CASE("text report: a height shortens the lists, never the cause block or the recap") {
  auto v = attributed(3);
  TextOptions opt;
  opt.width = 120;
  std::string full = verdict_to_text(v, opt);
  size_t full_lines = lines_of(full).size();
  opt.height = full_lines - 1;
  std::string fitted = verdict_to_text(v, opt);
  auto lines = lines_of(fitted);
  CHECK(lines.size() <= full_lines - 1);
  CHECK(lines[2] == "ROOT CAUSE  hardware / gpu.fallen_off_bus");
  CHECK(lines[4] == "  culprit nodes: node-01");
  CHECK(lines.back() == "verdict: attributed hardware / gpu.fallen_off_bus on node-01 (1 cause, 3 downstream)");
  // Too short for anything but the cause block and the recap: the shortest form.
  opt.height = 10;
  auto shortest = lines_of(verdict_to_text(v, opt));
  CHECK(shortest.size() > 10);
  CHECK(shortest.size() <= lines.size());
  CHECK(shortest[2] == "ROOT CAUSE  hardware / gpu.fallen_off_bus");
  // A height the report already fits changes nothing; --cascade is never shortened.
  opt.height = 200;
  CHECK(verdict_to_text(v, opt) == full);
  opt.height = 12;
  opt.cascade = true;
  TextOptions cascade = opt;
  cascade.height = 0;
  CHECK(verdict_to_text(v, opt) == verdict_to_text(v, cascade));
}

TEST_CASE("text report: plural forms") {
  auto one = verdict_to_text(attributed(1), {});
  CHECK(one.find("Downstream, demoted: 1 symptom on 1 node\n") != std::string::npos);
  CHECK(one.find("1 line read") != std::string::npos);
  CHECK(one.find("Cause symptom:\n") != std::string::npos);
  auto v = attributed(2);
  v.coverage.sources["app"].lines_read = 2;
  v.coverage.warnings = {"no kernel log from 1 of 3 nodes: node-03"};
  auto two = verdict_to_text(v, {});
  CHECK(two.find("Downstream, demoted: 2 symptoms on 2 nodes\n") != std::string::npos);
  CHECK(two.find("2 lines read") != std::string::npos);
  CHECK(two.find("Coverage warning:\n") != std::string::npos);
  CHECK(two.find("(1 cause, 2 downstream, 1 warning)") != std::string::npos);
  CHECK(count_of(0, "node") == "0 nodes");
  CHECK(count_of(1, "evidence line") == "1 evidence line");
  CHECK(count_of(2, "match", "matches") == "2 matches");
}

TEST_CASE("text report: lines are cut to the width, sentences wrap, colour codes take no columns") {
  auto v = attributed(3);
  v.outcome.root_cause_summary = std::string(150, 's') + " and then some words that must wrap onto the next line";
  for (bool color : {false, true}) {
    CAPTURE(color);
    TextOptions opt;
    opt.width = 80;
    opt.color = color;
    std::string r = verdict_to_text(v, opt);
    for (const auto& l : lines_of(r)) {
      CAPTURE(l);
      CHECK(columns(l) <= 80);
    }
    CHECK(r.find("…") != std::string::npos);                  // the evidence line was cut
    CHECK(r.find("the next line") != std::string::npos);      // the summary wrapped, nothing lost
    CHECK((r.find('\033') != std::string::npos) == color);
  }
  // Width 0: nothing is cut (the cause's evidence line is whole).
  std::string full = verdict_to_text(v, {});
  CHECK(full.find(std::string(200, 'x')) != std::string::npos);
  CHECK(full.find("…") == std::string::npos);
}

TEST_CASE("text report: --cascade lists every symptom with its rule; --explain adds the trail") {
  auto v = attributed(3);
  v.trail.push_back({"final", "Cascade", "demote", "nccl.remote_error@node-02", "downstream"});
  TextOptions opt;
  opt.cascade = true;
  std::string r = verdict_to_text(v, opt);
  for (const char* node : {"node-02", "node-03", "node-04"})
    CHECK(r.find(std::string("  - nccl.remote_error on ") + node + " ×3 (Cascade: downstream of the GPU on node-01)") !=
          std::string::npos);
  CHECK(r.find("Derivation trail") == std::string::npos);
  opt.explain = true;
  CHECK(verdict_to_text(v, opt).find("Derivation trail:\n  [final]\n    Cascade demote nccl.remote_error@node-02: downstream") !=
        std::string::npos);
}

TEST_CASE("text report: --explain groups a rule's repeated action, names where the rule is written, and ends with the recap") {
  auto v = attributed(1);
  for (const char* node : {"node-02", "node-03", "node-02", "node-04"})
    v.trail.push_back({"early", "PeerLost", "emit", std::string("net.peer_lost@") + node, "from 1 item", "termination.attr:172"});
  v.trail.push_back({"final", "Cascade", "demote", "nccl.remote_error@node-02#x", "downstream", "reasoning.attr:40"});
  TextOptions opt;
  opt.explain = true;
  std::string r = verdict_to_text(v, opt);
  CHECK(r.find("  [early]\n    PeerLost (termination.attr:172) emit net.peer_lost ×4 on node-02, node-03, node-04: from 1 item\n"
               "  [final]\n    Cascade (reasoning.attr:40) demote nccl.remote_error@node-02#x: downstream\n") != std::string::npos);
  auto lines = lines_of(r);
  CHECK(lines.back().rfind("verdict: attributed", 0) == 0);  // the trail comes before the recap
  // Asked for in full: at a narrow width the trail wraps, it is never cut.
  opt.width = 60;
  r = verdict_to_text(v, opt);
  std::string trail = r.substr(r.find("Derivation trail:"));
  trail = trail.substr(0, trail.find("\n\n"));
  CHECK(trail.find("…") == std::string::npos);
  CHECK(trail.find("node-04: from 1 item") != std::string::npos);
}

TEST_CASE("text report: a row whose evidence other hosts logged says who reported it") {
  auto v = attributed(1);
  Symptom gone = symptom("net.peer_gone", "node-02", 2);
  gone.state = SymptomState::Demoted;
  gone.demoted_by = StateChange{"Cascade", "downstream of the GPU on node-01", v.outcome.root_cause};
  gone.evidence[0].host = "node-01";  // node-01's ranks lost node-02
  gone.id = "net.peer_gone@node-02";
  v.symptoms.push_back(gone);
  std::string r = verdict_to_text(v, {});
  CHECK(r.find("  net.peer_gone      ×2 on node-02 (reported from node-01): downstream of the GPU on node-01\n") != std::string::npos);
  CHECK(r.find("nccl.remote_error  ×3 on node-02: downstream") != std::string::npos);  // its own lines: nothing added
}

TEST_CASE("text report: many nodes are counted, not listed") {
  auto v = attributed(6);
  std::string r = verdict_to_text(v, {});
  CHECK(r.find("×18 on 6 nodes (node-02, node-03, node-04, …)") != std::string::npos);
}

TEST_CASE("text report: where a hang is, under the status, said once") {
  Verdict v = attributed(2);
  HangLocation h;
  h.kind = "straggler";
  h.summary = "hang in nccl:all_reduce #43 of process group 0 (default_pg): rank 3 on node-02 never started it";
  v.hang = h;
  std::string text = verdict_to_text(v, TextOptions{});
  size_t status = text.find("ROOT CAUSE"), hang = text.find(h.summary);
  REQUIRE(hang != std::string::npos);
  CHECK(status < hang);
  CHECK(hang < text.find("culprit nodes:"));
  // An unattributed verdict whose reason already says where the hang is does not repeat it.
  v.outcome = Outcome{};
  v.outcome.status = "unattributed";
  v.outcome.overridden_by = "UnattributedHangLaggard";
  v.outcome.override_reason = "no cause found; where the hang is: rank 3 on node-02 never started collective #43";
  text = verdict_to_text(v, TextOptions{});
  CHECK(text.find(h.summary) == std::string::npos);
  CHECK(text.find("where the hang is: rank 3") != std::string::npos);
}
