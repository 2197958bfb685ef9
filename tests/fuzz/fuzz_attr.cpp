// libFuzzer: .attr text through the parser and semantic analysis. Any input
// must give either a catalog or coded diagnostics, bounded in size; never a
// crash, a hang or an exception (docs/robustness.md, rule files).
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/limits.h"
#include "compiler/catalog_loader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto loaded = culprit::compile_sources({{"fuzz.attr", text}});
  FUZZ_CHECK(loaded.ok() != loaded.diagnostics.has_errors());
  for (const auto& d : loaded.diagnostics.all()) {
    FUZZ_CHECK(d.code.size() == 5 && d.code[0] == 'E');
    FUZZ_CHECK(d.message.size() <= culprit::limits::kDiagnosticBytes);
  }
  std::string rendered = loaded.diagnostics.render(false);
  FUZZ_CHECK(rendered.size() <= (culprit::limits::kDiagnostics + 1) * 5 * culprit::limits::kDiagnosticBytes + 4096);
  return 0;
}
