// libFuzzer: NDJSON observations, as a bundle file or a service body would
// carry them. The first byte chooses the chunk size the stream is fed in
// and whether the first line is a context. Invariants: the reader either
// reads everything or stops with an error naming a line; chunking does not
// change the outcome; and the fast path of plain log lines agrees with the
// reference parser on every line it accepts (its contract).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/json_input.h"
#include "runtime/observation.h"
#include "runtime/observation_fast_parse.h"
#include "runtime/observation_reader.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

struct Outcome {
  bool ok = false;
  culprit::ObservationReadError::Kind kind{};
  int64_t line = 0;
  size_t count = 0;
  std::vector<std::string> texts;
};

Outcome read_all(std::string_view text, size_t chunk, bool context) {
  Outcome o;
  culprit::NdjsonObservationReader::Options opt;
  opt.first_line_is_context = context;
  opt.max_line = 1 << 16;  // small, so the fuzzer reaches the limit
  culprit::NdjsonObservationReader r(
      [&](culprit::Observation&& ob, int64_t) {
        o.texts.push_back(ob.text + "|" + ob.host + "|" + ob.source + "|" + ob.metric + "|" + ob.labels);
        return true;
      },
      opt);
  bool ok = true;
  for (size_t pos = 0; ok && pos < text.size(); pos += chunk) ok = r.feed(text.data() + pos, std::min(chunk, text.size() - pos));
  if (ok) ok = r.finish();
  o.ok = ok;
  o.kind = r.error().kind;
  o.line = r.error().line;
  o.count = static_cast<size_t>(r.observations());
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t chunk = 1 + data[0] % 64;
  bool context = data[0] & 0x80;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  Outcome a = read_all(text, chunk, context);
  Outcome b = read_all(text, text.size() + 1, context);
  FUZZ_CHECK(a.ok == b.ok && a.kind == b.kind && a.line == b.line && a.count == b.count && a.texts == b.texts);
  if (!a.ok) FUZZ_CHECK(a.line >= 1);
  // Per line: the fast path, when it says yes, agrees with the reference.
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    culprit::Observation fast;
    if (culprit::fast_parse_observation(line, fast)) {
      nlohmann::json j;
      culprit::JsonInputError e;
      FUZZ_CHECK(culprit::parse_json_input(line, j, e));
      culprit::Observation slow;
      std::string why;
      FUZZ_CHECK(culprit::parse_observation(j, slow, why));
      FUZZ_CHECK(fast.host == slow.host && fast.source == slow.source && fast.text == slow.text && fast.ts == slow.ts &&
                 fast.file == slow.file && fast.line == slow.line && fast.offset == slow.offset &&
                 fast.is_metric == slow.is_metric);
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return 0;
}
