// The recovery table (runtime/recovery.h): every line kind parses, every
// mistake is a coded diagnostic at its column, the bundled table covers
// every class the bundled catalog classifies, and recommend() never gives a
// node action to a verdict that is not attributed, whatever the table says.
#include "runtime/recovery.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <filesystem>
#include <unistd.h>

#include "base/vocabulary.h"
#include "compiler/catalog_loader.h"

using namespace culprit;

namespace {

std::string parse_errors(const std::string& text, RecoveryTable& t) {
  Diagnostics d;
  parse_recovery_table("site/recovery.table", text, t, d);
  return d.render();
}

Symptom cause(const std::string& kind, const std::string& node, const std::string& dom, const std::string& sub,
              std::vector<std::pair<std::string, Value>> fields) {
  Symptom s;
  s.kind_name = kind;
  s.node = node;
  s.id = kind + "@" + node;
  s.rule = "Rule" + kind;
  s.classification = std::make_pair(dom, sub);
  for (auto& [n, v] : fields) {
    s.field_names.push_back(n);
    s.fields.push_back(v);
  }
  Evidence e;
  e.file = "logs/" + node + "/kernel.log";
  e.line = 12;
  s.evidence.push_back(e);
  s.evidence_total = 1;
  return s;
}

const char* kTable = R"(
bucket RESET_GPU   reset_gpu   "reset it"
bucket RESTART_BM  reboot
xid 48  RESET_GPU
xid 79  RESTART_BM
class hardware/gpu.memory   restart_excluding  drain,xid  "ECC"
class hardware/nvlink.signal_integrity restart_excluding drain,inspect_link
domain hardware  restart_excluding  drain
domain software  stop_fix_code  -
)";

}  // namespace

TEST_CASE("recovery: a table parses into buckets, XIDs, classes and domain defaults") {
  RecoveryTable t;
  CHECK(parse_errors(kTable, t).empty());
  CHECK(t.buckets.size() == 2);
  CHECK(t.xids.at(48) == "RESET_GPU");
  CHECK(t.classes.at("hardware/gpu.memory").actions == std::vector<std::string>{"drain", "xid"});
  CHECK(t.classes.at("hardware/gpu.memory").note == "ECC");
  CHECK(t.domains.at("software").job == "stop_fix_code");
  CHECK(t.domains.at("software").actions.empty());
}

TEST_CASE("recovery: mistakes are coded diagnostics at their column, with a hint") {
  RecoveryTable t;
  std::string out = parse_errors("class hardware/gpu.memory restart_exluding drain\n", t);
  CHECK(out.find("site/recovery.table:1:27: error[E0904]: unknown job action 'restart_exluding'") != std::string::npos);
  CHECK(out.find("did you mean 'restart_excluding'?") != std::string::npos);
  out = parse_errors("class hardware/gpu.memory restart_excluding drain,rebot\n", t);
  CHECK(out.find("recovery.table:1:51: error[E0905]: unknown node action 'rebot'") != std::string::npos);
  out = parse_errors("klass hardware/x none -\n", t);
  CHECK(out.find("1:1: error[E0902]: unknown line 'klass'") != std::string::npos);
  out = parse_errors("xid 48 NO_SUCH\n", t);
  CHECK(out.find("1:8: error[E0906]: unknown bucket 'NO_SUCH'") != std::string::npos);
  out = parse_errors("class hardwre/gpu.memory none -\n", t);
  CHECK(out.find("error[E0907]: unknown domain 'hardwre'") != std::string::npos);
  out = parse_errors("domain hardware none\n", t);
  CHECK(out.find("error[E0903]: a domain line has 3 columns") != std::string::npos);
  out = parse_errors("domain hardware none - \"unterminated\n", t);
  CHECK(out.find("error[E0909]") != std::string::npos);
  out = parse_errors("bucket B xid\n", t);
  CHECK(out.find("error[E0906]: a bucket cannot refer to an XID bucket") != std::string::npos);
  out = parse_errors("domain user none -\ndomain user none -\n", t);
  CHECK(out.find("2:8: error[E0907]: 'domain user' is listed twice in this file") != std::string::npos);
  // The source line and a caret, as for rule diagnostics.
  out = parse_errors("xid 4x8 RESET_GPU\n", t);
  CHECK(out.find("xid 4x8 RESET_GPU") != std::string::npos);
  CHECK(out.find("^~~") != std::string::npos);
}

TEST_CASE("recovery: an attributed hardware verdict drains the culprit and adds its XID's bucket") {
  RecoveryTable t;
  REQUIRE(parse_errors(kTable, t).empty());
  Verdict v;
  v.outcome.status = "attributed";
  v.outcome.domain = "hardware";
  v.outcome.sub_domain = "gpu.memory";
  v.outcome.culprit_nodes = {"node-02"};
  v.symptoms.push_back(cause("gpu.memory", "node-02", "hardware", "gpu.memory",
                             {{"pci", Value::string("0000:3b:00")}, {"xid", Value::integer(48)}}));
  v.outcome.root_cause = v.symptoms[0].id;
  Recommendation r = recommend(v, t);
  CHECK(r.job.action == "restart_excluding");
  CHECK(r.job.nodes == std::vector<std::string>{"node-02"});
  CHECK(r.job.basis == "class hardware/gpu.memory");
  CHECK(r.job.rule == "Rulegpu.memory");
  REQUIRE(r.nodes.size() == 2);
  CHECK(r.nodes[0].action == "drain");
  CHECK(r.nodes[1].action == "reset_gpu");
  CHECK(r.nodes[1].target.at("pci") == "0000:3b:00");
  CHECK(r.nodes[1].basis == "xid 48 RESET_GPU");
  CHECK(r.nodes[1].evidence == std::vector<std::string>{"logs/node-02/kernel.log:12"});
}

TEST_CASE("recovery: a cause only the job's own output states gets inspect, never a destructive node action") {
  // Issue 38: a job that prints "uncorrectable ECC error" must not get its node drained.
  RecoveryTable t;
  REQUIRE(parse_errors(kTable, t).empty());
  Verdict v;
  v.outcome.status = "attributed";
  v.outcome.domain = "hardware";
  v.outcome.sub_domain = "gpu.memory";
  v.outcome.culprit_nodes = {"node-02"};
  Symptom s = cause("gpu.memory", "node-02", "hardware", "gpu.memory", {{"pci", Value::string("0000:3b:00")}});
  s.evidence[0].source = "app";
  s.evidence[0].file = "logs/node-02/app.log";
  s.evidence_sources = {"app"};
  v.symptoms.push_back(s);
  v.outcome.root_cause = s.id;
  CHECK(rests_on_job_output_only(v.symptoms[0]));
  Recommendation r = recommend(v, t);
  CHECK(r.job.action == "restart_excluding");  // the job action is the table's
  REQUIRE(r.nodes.size() == 1);
  CHECK(r.nodes[0].action == "inspect");
  CHECK(r.nodes[0].node == "node-02");
  CHECK(r.nodes[0].basis == "evidence app only");
  CHECK(r.nodes[0].reason.find("only the job's own output") != std::string::npos);
  CHECK_FALSE(vocab::is_destructive(r.nodes[0].action));

  // All sources count, not only the quoted lines: a kernel line past the
  // quoted ones is corroboration.
  v.symptoms[0].evidence_sources = {"app", "kernel"};
  CHECK_FALSE(rests_on_job_output_only(v.symptoms[0]));
  r = recommend(v, t);
  REQUIRE(r.nodes.size() == 1);
  CHECK(r.nodes[0].action == "drain");

  // A metric or scheduler source alone backs it too.
  v.symptoms[0].evidence_sources = {"metrics"};
  r = recommend(v, t);
  REQUIRE(r.nodes.size() == 1);
  CHECK(r.nodes[0].action == "drain");
}

TEST_CASE("recovery: reset_gpu without a PCI address becomes a reboot; a class without a line takes its domain's") {
  RecoveryTable t;
  REQUIRE(parse_errors(kTable + std::string("class hardware/gpu.timeout restart_excluding reset_gpu\n"), t).empty());
  Verdict v;
  v.outcome.status = "attributed";
  v.outcome.domain = "hardware";
  v.outcome.sub_domain = "gpu.timeout";
  v.outcome.culprit_nodes = {"n1"};
  v.symptoms.push_back(cause("gpu.timeout", "n1", "hardware", "gpu.timeout", {}));
  Recommendation r = recommend(v, t);
  REQUIRE(r.nodes.size() == 1);
  CHECK(r.nodes[0].action == "reboot");
  CHECK(r.nodes[0].reason.find("no PCI address") != std::string::npos);
  v.outcome.sub_domain = "host.fan";
  v.symptoms[0].classification = std::make_pair("hardware", "host.fan");
  r = recommend(v, t);
  CHECK(r.job.basis == "domain hardware");
  REQUIRE(r.nodes.size() == 1);
  CHECK(r.nodes[0].action == "drain");
}

TEST_CASE("recovery: ambiguous, unattributed and no_failure verdicts take no node out of service, whatever the table says") {
  RecoveryTable t;
  REQUIRE(parse_errors(kTable, t).empty());
  for (const char* status : {"ambiguous", "unattributed", "no_failure"}) {
    Verdict v;
    v.outcome.status = status;
    v.outcome.culprit_nodes = {"node-01"};  // even a stray culprit list gives nothing
    v.symptoms.push_back(cause("gpu.memory", "node-01", "hardware", "gpu.memory",
                               {{"pci", Value::string("0000:3b:00")}, {"xid", Value::integer(48)}}));
    Candidate c{"hardware", "gpu.memory", {"node-01"}, {v.symptoms[0].id}};
    if (std::string(status) == "ambiguous")
      v.outcome.candidates = {c, {"software", "cuda_error", {"node-03"}, {"cuda.error@node-03"}}};
    Recommendation r = recommend(v, t);
    CAPTURE(status);
    CHECK(r.job.action == "none");
    CHECK(r.job.basis == std::string("status ") + status);
    if (std::string(status) != "ambiguous") {
      CHECK(r.nodes.empty());
      continue;
    }
    // The candidate whose class would drain and reset its node gets that
    // node inspected, nothing more; the software candidate acts on no node.
    REQUIRE(r.nodes.size() == 1);
    CHECK(r.nodes[0].node == "node-01");
    CHECK(r.nodes[0].action == "inspect");
    CHECK(r.nodes[0].basis == "candidate of an ambiguous verdict");
    CHECK(r.nodes[0].symptoms == std::vector<std::string>{v.symptoms[0].id});
    CHECK(r.nodes[0].reason == "inspect node-01 (hardware/gpu.memory of an ambiguous verdict: looked at, not drained, until a person decides)");
    CHECK(r.job.reason.find("the nodes a candidate would act on are to be inspected") != std::string::npos);
  }
}

TEST_CASE("recovery: the bundled table loads and covers every class of the bundled catalog") {
  LoadedCatalog cat = load_catalog({CULPRIT_STDLIB_FOR_TESTS});
  REQUIRE(cat.ok());
  Diagnostics d;
  auto table = load_recovery_table({CULPRIT_STDLIB_FOR_TESTS}, d, cat.catalog.get());
  REQUIRE(table);
  CHECK(d.render().empty());  // no E0908: no class falls back to its domain
  CHECK(table->digest.rfind("sha256:", 0) == 0);
  CHECK(table->xids.at(79) == "RESTART_BM");
  CHECK(table->xids.at(119) == "RESET_GPU");
  CHECK(table->xids.at(13) == "RESTART_APP");
}

TEST_CASE("recovery: a site table replaces entries of the bundled one key by key") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("culprit-recovery-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "recovery.table") << "class hardware/gpu.memory restart_excluding drain,replace_suspect \"site: RMA at once\"\n";
  Diagnostics d;
  auto table = load_recovery_table({CULPRIT_STDLIB_FOR_TESTS, dir.string()}, d);
  REQUIRE(table);
  CHECK(table->classes.at("hardware/gpu.memory").note == "site: RMA at once");
  CHECK(table->classes.at("hardware/gpu.fallen_off_bus").job == "restart_excluding");
  CHECK(table->files.size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("recovery: a class without a table line is warned at its classify, naming the table to edit") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("culprit-recovery-e0908-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "site.attr") << "extractor SiteReset from app {\n"
                                      "  match /prolog: reset GPU (?<pci>\\S+)/\n"
                                      "  emit site.reset { pci: pci }\n"
                                      "  test { line \"prolog: reset GPU 0000:3b:00\" expect site.reset { pci: \"0000:3b:00\" } }\n"
                                      "  test { line \"prolog: ok\" expect none }\n"
                                      "}\n"
                                      "rule SiteResetSymptom stage symptoms {\n"
                                      "  for e: event site.reset\n"
                                      "  symptom site.gpu_reset key e.pci priority 95 { summary: \"reset {e.pci}\" }\n"
                                      "}\n"
                                      "rule ClassifySiteReset stage outcome {\n"
                                      "  for s: symptom site.gpu_reset\n"
                                      "  classify s as hardware \"bmc.reset\"\n"
                                      "}\n";
  LoadedCatalog cat = load_catalog({CULPRIT_STDLIB_FOR_TESTS, dir.string()});
  REQUIRE(cat.ok());
  Diagnostics d;
  auto table = load_recovery_table({CULPRIT_STDLIB_FOR_TESTS, dir.string()}, d, cat.catalog.get());
  REQUIRE(table);
  std::string text = d.render();
  CAPTURE(text);
  CHECK(text.find((dir / "site.attr").string() + ":13:3: warning[E0908]: class hardware/bmc.reset has no line") != std::string::npos);
  CHECK(text.find("classify s as hardware \"bmc.reset\"") != std::string::npos);  // the source line, with its caret
  CHECK(text.find("help: add to " + (dir / "recovery.table").string() + ": class hardware/bmc.reset JOB ACTIONS") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("recovery: an unattributed verdict's localised hang: its laggards' nodes are inspected; a desync stops the job's code") {
  RecoveryTable t;
  REQUIRE(parse_errors(kTable, t).empty());
  Verdict v;
  v.outcome.status = "unattributed";
  HangLocation h;
  h.kind = "straggler";
  h.laggard_ranks = {13};
  h.laggard_nodes = {"node-02"};
  h.summary = "hang in nccl:all_reduce #43 of process group 0 (default_pg): rank 13 on node-02 never started it";
  h.evidence = {"hang.laggard@node-02#13"};
  v.hang = h;
  Recommendation r = recommend(v, t);
  CHECK(r.job.action == "none");
  REQUIRE(r.nodes.size() == 1);
  CHECK(r.nodes[0].node == "node-02");
  CHECK(r.nodes[0].action == "inspect");
  CHECK(r.nodes[0].basis == "hang straggler");
  CHECK(r.nodes[0].symptoms == h.evidence);
  CHECK(r.nodes[0].reason == "inspect node-02: " + h.summary);

  v.hang->kind = "desync";
  v.hang->laggard_nodes.clear();
  r = recommend(v, t);
  CHECK(r.job.action == "stop_fix_code");
  CHECK(r.job.basis == "hang desync");
  CHECK(r.nodes.empty());

  // A stalled collective names no node: nothing follows; nor from an ambiguous verdict's hang.
  v.hang->kind = "stalled_collective";
  r = recommend(v, t);
  CHECK(r.job.action == "none");
  CHECK(r.nodes.empty());
  v.hang->kind = "straggler";
  v.hang->laggard_nodes = {"node-02"};
  v.outcome.status = "ambiguous";
  r = recommend(v, t);
  CHECK(r.nodes.empty());
}
