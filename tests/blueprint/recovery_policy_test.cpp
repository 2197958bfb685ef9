// The recovery policy: every mistake is a coded diagnostic at file:line:col;
// rules are tried in order, a history condition reads the store's fault
// counts and an unmet one is named in the reason; no policy acts on all.
#include "blueprint/recovery_policy.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <map>

#include "tests/support/test_support.h"

using namespace culprit;
using namespace culprit::blueprint;

namespace {

std::string errors_of(const std::string& text, RecoveryPolicy& p) {
  Diagnostics d;
  parse_recovery_policy("/etc/culprit/policy.yaml", text, p, d);
  return d.render(false);
}

// Fault counts by node, and the windows asked for.
struct FakeHistory : FaultHistory {
  std::map<std::string, int64_t> faults;
  std::vector<std::pair<int64_t, int64_t>> windows;
  std::vector<std::string> sub_domains;
  bool culprit_attempts(const std::string& node, const std::string&, const std::string& sub, int64_t from, int64_t until,
                        int64_t& count, std::string&) override {
    windows.emplace_back(from, until);
    sub_domains.push_back(sub);
    count = faults.count(node) ? faults[node] : 0;
    return true;
  }
};

constexpr int64_t kDay = 86400LL * 1000000000;

const char* kPolicy =
    "rules:\n"
    "  - action: drain\n"
    "    domain: hardware\n"
    "    sub_domain: gpu.*\n"
    "    faults: 2\n"
    "    within: 7d\n"
    "    then: act\n"
    "  - action: drain\n"
    "    then: hold\n"
    "  - action: restart_excluding\n"
    "    then: act\n"
    "replace_suspect: {faults: 3, within: 30d}\n"
    "default: hold\n";

}  // namespace

TEST_CASE("policy: a valid file parses into rules, a repeat rule and a default") {
  RecoveryPolicy p;
  CHECK(errors_of(kPolicy, p).empty());
  REQUIRE(p.rules.size() == 3);
  CHECK(p.rules[0].action == "drain");
  CHECK(p.rules[0].faults == 2);
  CHECK(p.rules[0].within_ns == 7 * kDay);
  CHECK(p.rules[0].where == "policy.yaml:2");
  CHECK(p.rules[1].then == "hold");
  REQUIRE(p.replace_suspect);
  CHECK(p.replace_suspect->faults == 3);
  CHECK(p.replace_suspect->domain == "hardware");
  CHECK(p.default_decision == "hold");
  RecoveryPolicy empty;
  CHECK(errors_of("", empty).empty());
  CHECK(empty.rules.empty());
}

TEST_CASE("policy: mistakes are coded diagnostics with file:line:col and a hint") {
  RecoveryPolicy p;
  std::string out = errors_of("rules:\n  - action: drian\n    then: act\n", p);
  CHECK(out.find("/etc/culprit/policy.yaml:2:13: error[B0904]: 'drian' is not a valid value for 'action'") != std::string::npos);
  CHECK(out.find("did you mean 'drain'?") != std::string::npos);
  out = errors_of("rulez: []\n", p);
  CHECK(out.find("1:1: error[B0902]: unknown key 'rulez' in the policy") != std::string::npos);
  CHECK(out.find("did you mean 'rules'?") != std::string::npos);
  out = errors_of("rules:\n  - action: drain\n    faults: 2\n    then: act\n", p);
  CHECK(out.find("2:5: error[B0906]: a rule with faults needs within") != std::string::npos);
  out = errors_of("rules:\n  - action: drain\n    faults: two\n    within: 7d\n    then: act\n", p);
  CHECK(out.find("3:13: error[B0905]: 'faults' must be an integer from 1 to 1000000") != std::string::npos);
  out = errors_of("rules:\n  - action: restart\n    faults: 2\n    within: 1d\n    then: act\n", p);
  CHECK(out.find("error[B0906]: 'restart' is a job action") != std::string::npos);
  out = errors_of("rules:\n  - action: drain\n", p);
  CHECK(out.find("error[B0906]: a rule needs 'then: act' or 'then: hold'") != std::string::npos);
  out = errors_of("rules: [\n", p);
  CHECK(out.find("error[B0901]: not valid YAML") != std::string::npos);
  out = errors_of("default: maybe\n", p);
  CHECK(out.find("1:10: error[B0904]: 'maybe' is not a valid value for 'decision'") != std::string::npos);
  CHECK(out.find("= help: one of act, hold") != std::string::npos);
}

TEST_CASE("policy: drain only after 2 faults in 7 days; the unmet condition is in the reason") {
  RecoveryPolicy p;
  REQUIRE(errors_of(kPolicy, p).empty());
  FakeHistory h;
  h.faults["node-02"] = 1;
  PolicyDecision d;
  std::string err;
  int64_t end = 100 * kDay;
  REQUIRE(decide(&p, "drain", "node-02", "hardware", "gpu.memory", end, h, d, err));
  CHECK(d.decision == "hold");
  CHECK(d.decided_by == "policy.yaml:8");
  CHECK(d.reason.find("policy.yaml:2 needs 2 faults of node-02 in 7d, it had 1") != std::string::npos);
  REQUIRE(h.windows.size() == 1);
  CHECK(h.windows[0] == std::make_pair(end - 7 * kDay, end));
  CHECK(h.sub_domains[0] == "gpu.*");
  h.faults["node-02"] = 2;
  REQUIRE(decide(&p, "drain", "node-02", "hardware", "gpu.memory", end, h, d, err));
  CHECK(d.decision == "act");
  CHECK(d.decided_by == "policy.yaml:2");
  // Another class: the sub_domain filter does not match, the next rule holds.
  REQUIRE(decide(&p, "drain", "node-02", "hardware", "nvlink.signal_integrity", end, h, d, err));
  CHECK(d.decision == "hold");
  // A job action with its own rule, and one that falls to the default.
  REQUIRE(decide(&p, "restart_excluding", "", "hardware", "gpu.memory", end, h, d, err));
  CHECK(d.decision == "act");
  REQUIRE(decide(&p, "stop_fix_code", "", "software", "application_exception", end, h, d, err));
  CHECK(d.decision == "hold");
  CHECK(d.decided_by == "policy.yaml:13");
}

TEST_CASE("policy: without a policy every recommendation acts") {
  FakeHistory h;
  PolicyDecision d;
  std::string err;
  REQUIRE(decide(nullptr, "drain", "node-02", "hardware", "gpu.memory", 0, h, d, err));
  CHECK(d.decision == "act");
  CHECK(d.decided_by == "no policy");
  CHECK(h.windows.empty());
}

TEST_CASE("policy: sub_domain patterns") {
  CHECK(sub_domain_matches("", "gpu.memory"));
  CHECK(sub_domain_matches("gpu.*", "gpu.memory"));
  CHECK(sub_domain_matches("gpu.*", "gpu"));
  CHECK_FALSE(sub_domain_matches("gpu.*", "gpux"));
  CHECK_FALSE(sub_domain_matches("gpu.memory", "gpu.memory.x"));
  CHECK(sub_domain_matches("nvlink", "nvlink"));
}

// ------------------------------------------------ hostile and careless input
// Issue 38: durations, YAML edge cases, and the policy file itself.

TEST_CASE("policy: a window out of range is refused, naming the key") {
  RecoveryPolicy p;
  std::string out = errors_of("rules:\n  - action: drain\n    faults: 2\n    within: 99999999999999999999d\n    then: act\n", p);
  CHECK(out.find("4:13: error[B0905]: 'within' is out of range: at most 3650d (limit duration)") != std::string::npos);
  // Inside int64, but the window's start (end - within) was not far from overflow: once accepted.
  out = errors_of("replace_suspect: {faults: 3, within: 106751d}\n", p);
  CHECK(out.find("1:38: error[B0905]: 'within' is out of range") != std::string::npos);
  CHECK(errors_of("replace_suspect: {faults: 3, within: 3650d}\n", p).empty());
}

TEST_CASE("policy: a second document, anchors, aliases and merge keys are refused with their position") {
  RecoveryPolicy p;
  // The second document (default: hold) was dropped in silence.
  std::string out = errors_of("rules: []\n---\ndefault: hold\n", p);
  CHECK(out.find("policy.yaml:2:1: error[B0901]: a second YAML document") != std::string::npos);
  out = errors_of("rules:\n  - &r {action: drain, then: hold}\n  - *r\n", p);
  CHECK(out.find("2:5: error[B0901]: anchors ('&name') are not supported here") != std::string::npos);
  out = errors_of("rules:\n  - <<: {action: drain}\n    then: hold\n", p);
  CHECK(out.find("2:5: error[B0902]: merge keys ('<<') are not supported in a rule") != std::string::npos);
  out = errors_of("rules: " + std::string(100000, '['), p);
  CHECK(out.find("limit config_depth exceeded") != std::string::npos);
  out = errors_of("\xEF\xBB\xBF" "default: hold\n", p);
  CHECK(out.find("1:1: error[B0901]: the file starts with a byte-order mark") != std::string::npos);
  out = errors_of("rules:\n\t- action: drain\n", p);
  CHECK(out.find("2:1: error[B0901]: a tab in the indentation") != std::string::npos);
}

TEST_CASE("policy: repeated and non-scalar keys name where") {
  RecoveryPolicy p;
  std::string out = errors_of("default: act\nrules: []\ndefault: hold\n", p);
  CHECK(out.find("3:1: error[B0902]: 'default' is given twice in the policy (first on line 1)") != std::string::npos);
  out = errors_of("rules:\n  - {? [action]: drain, then: act}\n", p);
  CHECK(out.find("error[B0902]: the keys of a rule must be plain names") != std::string::npos);
  out = errors_of("rules:\n  - action: [drain]\n    then: act\n", p);
  CHECK(out.find("2:13: error[B0903]: 'action' must be a single value") != std::string::npos);
}

TEST_CASE("policy: the file must be a regular file of at most config_file_bytes") {
  culprit::testing::TempDir dir;
  auto fifo = dir.path() / "policy.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  RecoveryPolicy p;
  Diagnostics d;
  std::string err;
  // It once blocked until some process wrote to the FIFO: `culprit run --policy` hung.
  auto done = std::async(std::launch::async, [&] { return load_recovery_policy(fifo.string(), p, d, err); });
  bool quick = done.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  for (int i = 0; !quick && i < 50 && done.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready; ++i) {
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // let the blocked reader see an end
    if (fd >= 0) ::close(fd);
  }
  CHECK(quick);
  CHECK(err.find("cannot read the policy file " + fifo.string() + ": it is a FIFO, not a regular file") != std::string::npos);
  err.clear();
  auto big = dir.write("big.yaml", "default: hold\n" + std::string(5u << 20, '#') + "\n");
  CHECK_FALSE(load_recovery_policy(big.string(), p, d, err));
  CHECK(err.find("limit config_file_bytes exceeded") != std::string::npos);
}
