// libFuzzer: NCCL RAS reports in their JSON form (ncclras -f json), through
// the bounded JSON parser and the report's layout, rendered as evidence
// lines. Either lines (one header, the rest naming a communicator, none with
// a line break, all of source ras on the given host, numbered from 1) or a
// coded refusal (RS001-RS003) of bounded length with nothing appended; the
// same answer twice.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/nccl_ras_report.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  // The first byte picks the job's size by the layout (0: unknown).
  int64_t world = size ? data[0] % 5 : 0;
  std::vector<culprit::Observation> out, again;
  std::string error, error_again;
  bool ok = culprit::read_nccl_ras_json(bytes, "node-01", "logs/node-01/ras.log", world, out, error);
  bool ok_again = culprit::read_nccl_ras_json(bytes, "node-01", "logs/node-01/ras.log", world, again, error_again);
  FUZZ_CHECK(ok == ok_again && error == error_again && out.size() == again.size());
  if (ok) {
    FUZZ_CHECK(!out.empty() && out[0].text.rfind("nccl ras report: ", 0) == 0);
    for (size_t i = 0; i < out.size(); ++i) {
      const auto& o = out[i];
      FUZZ_CHECK(o.text == again[i].text);
      FUZZ_CHECK(o.source == "ras" && o.host == "node-01" && o.line == static_cast<int64_t>(i) + 1);
      FUZZ_CHECK(o.text.rfind("nccl ras report: ", 0) == 0);
      if (i > 0) FUZZ_CHECK(o.text.rfind("nccl ras report: communicator ", 0) == 0);
    }
  } else {
    FUZZ_CHECK(out.empty());
    FUZZ_CHECK(!error.empty() && error.size() < 4096);
    FUZZ_CHECK(error.rfind("RS00", 0) == 0);
  }
  return 0;
}
