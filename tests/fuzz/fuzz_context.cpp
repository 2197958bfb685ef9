// libFuzzer: context.json documents. Either a context within its limits or
// an error message of bounded length; parsing the same text twice gives the
// same result.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/limits.h"
#include "runtime/bundle.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  culprit::WorkloadContext c;
  std::string error;
  bool ok = culprit::parse_context_json(text, c, error);
  if (ok) {
    FUZZ_CHECK(!c.workload_id.empty());
    FUZZ_CHECK(c.nodes.size() <= culprit::limits::kContextNodes);
    for (size_t i = 1; i < c.nodes.size(); ++i) FUZZ_CHECK(c.nodes[i - 1] < c.nodes[i]);
    FUZZ_CHECK(!c.start || !c.end || *c.start <= *c.end);
  } else {
    FUZZ_CHECK(!error.empty() && error.size() < 4096);
  }
  culprit::WorkloadContext again;
  std::string error2;
  FUZZ_CHECK(culprit::parse_context_json(text, again, error2) == ok && error2 == error);
  return 0;
}
