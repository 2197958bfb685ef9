// libFuzzer: raw bytes as the input of `culprit lsp` (cli/lsp_transport.h),
// every message body then used as a document for the position and word
// conversions (cli/lsp_text.h). Invariants: reading ends (each call consumes
// input or reports the end), a message never exceeds the body limit, and the
// UTF-16 and byte offsets of a line stay inside it and round-trip to a
// character boundary at or before where they started.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/lsp_text.h"
#include "cli/lsp_transport.h"
#include "tests/fuzz/fuzz_support.h"

namespace lsp = culprit::cli::lsp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  std::istringstream in(input);
  constexpr size_t kLimit = 4096;
  for (size_t n = 0; n <= size + 1; ++n) {
    auto before = in.tellg();
    lsp::Incoming m = lsp::read_message(in, kLimit);
    if (m.status == lsp::Incoming::End) break;
    FUZZ_CHECK(m.status != lsp::Incoming::Message || m.body.size() <= kLimit);
    FUZZ_CHECK(in.tellg() == std::streampos(-1) || in.tellg() > before);  // progress
    if (m.status != lsp::Incoming::Message) continue;
    for (uint32_t li = 0; li < 4; ++li) {
      std::string_view line = lsp::line_of(m.body, li);
      for (uint32_t ch = 0; ch < 8; ++ch) {
        uint32_t byte = lsp::utf16_to_byte(line, ch);
        FUZZ_CHECK(byte <= line.size());
        uint32_t back = lsp::byte_to_utf16(line, byte);
        FUZZ_CHECK(back <= ch);
        FUZZ_CHECK(lsp::utf16_to_byte(line, back) == byte);
        uint32_t start = 0;
        std::string_view w = lsp::word_at(line, byte, start);
        FUZZ_CHECK(w.empty() || (start <= byte && start + w.size() <= line.size()));
      }
    }
    std::string path = lsp::uri_to_path(m.body);
    if (!path.empty() && path.front() == '/') FUZZ_CHECK(lsp::uri_to_path(lsp::path_to_uri(path)) == path);
  }
  return 0;
}
