// libFuzzer: Flight Recorder dumps, through the restricted pickle reader (or
// the JSON reader) and the layout reader, then rendered as evidence lines.
// Either a dump or a coded refusal (PKnnn / FRnnn) of bounded length; no
// opcode outside the reader's list is ever accepted; reading the same bytes
// twice gives the same result.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/limits.h"
#include "runtime/flight_recorder.h"
#include "runtime/pickle_reader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  culprit::FlightRecorderDump d;
  std::string error;
  bool ok = culprit::read_flight_recorder_dump(bytes, 3, "node-01", "traces/node-01/nccl_trace_rank_3", d, error);
  if (ok) {
    FUZZ_CHECK(d.entries.size() <= culprit::limits::kFlightRecorderEntries);
    for (const auto& e : d.entries)
      FUZZ_CHECK(e.state == "scheduled" || e.state == "started" || e.state == "completed");
    auto lines = culprit::flight_recorder_observations({d}, [](int64_t r) { return r % 2 ? std::string("node-02") : std::string(); });
    FUZZ_CHECK(lines.size() == 1 + d.groups.size() + d.entries.size());
    for (const auto& o : lines) {
      FUZZ_CHECK(o.source == "flight_recorder" && o.host == "node-01");
      FUZZ_CHECK(o.text.find('\n') == std::string::npos);
    }
  } else {
    FUZZ_CHECK(!error.empty() && error.size() < 4096);
    FUZZ_CHECK(error.rfind("PK", 0) == 0 || error.rfind("FR", 0) == 0);
  }
  // The pickle reader alone: a refusal always carries its code and offset.
  culprit::PickleDocument doc;
  culprit::PickleError perr;
  if (!culprit::decode_pickle(bytes, doc, perr)) {
    FUZZ_CHECK(perr.code.size() == 5 && perr.code.rfind("PK", 0) == 0);
    FUZZ_CHECK(perr.offset <= bytes.size());
  } else {
    FUZZ_CHECK(doc.root() < doc.size());
  }
  culprit::FlightRecorderDump again;
  std::string error2;
  FUZZ_CHECK(culprit::read_flight_recorder_dump(bytes, 3, "node-01", "traces/node-01/nccl_trace_rank_3", again, error2) == ok &&
             error2 == error && again.entries.size() == d.entries.size());
  return 0;
}
