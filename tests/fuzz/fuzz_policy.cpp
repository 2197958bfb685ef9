// libFuzzer: the recovery policy reader (blueprint/recovery_policy.h) on
// arbitrary text, and decide() over what it accepts. The reader must end
// with a policy or coded diagnostics (never an exception, a crash, a deep
// recursion or unbounded memory); an accepted policy has bounded, positive
// windows, and every decision is act or hold with who made it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/limits.h"
#include "blueprint/recovery_policy.h"
#include "runtime/recovery.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// A history in which every node was the culprit of `count` attempts.
class FixedHistory : public culprit::blueprint::FaultHistory {
 public:
  explicit FixedHistory(int64_t count) : count_(count) {}
  bool culprit_attempts(const std::string&, const std::string&, const std::string&, int64_t from_ns, int64_t until_ns,
                        int64_t& count, std::string&) override {
    FUZZ_CHECK(from_ns <= until_ns);
    count = count_;
    return true;
  }

 private:
  int64_t count_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace culprit;
  using namespace culprit::blueprint;
  const std::string text(reinterpret_cast<const char*>(data), size);
  RecoveryPolicy policy;
  Diagnostics diags;
  bool ok = parse_recovery_policy("policy.yaml", text, policy, diags);
  FUZZ_CHECK(ok == !diags.has_errors());
  FUZZ_CHECK(ok || !diags.render(false).empty());
  for (const auto& d : diags.all()) FUZZ_CHECK(d.code.size() == 5 && d.code.rfind("B09", 0) == 0);
  if (!ok) return 0;
  FUZZ_CHECK(policy.default_decision == "act" || policy.default_decision == "hold");
  for (const auto& r : policy.rules) {
    FUZZ_CHECK(r.then == "act" || r.then == "hold");
    FUZZ_CHECK(r.within_ns >= 0 && r.within_ns <= limits::kMaxDurationNs);
    FUZZ_CHECK((r.faults > 0) == (r.within_ns > 0));
  }
  if (policy.replace_suspect) FUZZ_CHECK(policy.replace_suspect->within_ns <= limits::kMaxDurationNs);
  const int64_t end_ns = 1778488925000000000LL;  // 2026-05-11
  for (int64_t count : {0, 1, 1000000}) {
    FixedHistory h(count);
    for (const auto* actions : {&job_actions(), &node_actions()})
      for (const auto& action : *actions) {
        PolicyDecision d;
        std::string err;
        FUZZ_CHECK(decide(&policy, action, actions == &node_actions() ? "node-01" : "", "hardware", "gpu.memory", end_ns,
                          h, d, err));
        FUZZ_CHECK(d.decision == "act" || d.decision == "hold");
        FUZZ_CHECK(!d.decided_by.empty());
      }
  }
  return 0;
}
