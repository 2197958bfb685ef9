// Shared by the libFuzzer targets: a small catalog compiled once, and a
// check that aborts (so libFuzzer reports it) when an invariant fails.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "compiler/catalog_loader.h"
#include "runtime/program.h"

namespace culprit::fuzz {

[[noreturn]] inline void invariant_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: invariant failed: %s\n", file, line, what);
  std::abort();
}
#define FUZZ_CHECK(cond) \
  do {                   \
    if (!(cond)) ::culprit::fuzz::invariant_failed(#cond, __FILE__, __LINE__); \
  } while (0)

// Extractors for kernel and app lines, a rule that makes symptoms: enough
// for the scan, the engine and the verdict to run, cheap to build.
inline const char* const kSmallCatalog = R"attr(
catalog "fuzz" version "1"
extractor Xid from kernel {
  match /NVRM: Xid \(PCI:(?<pci>[0-9a-fA-F:.]+)\): (?<code>\d+)/
  emit gpu.xid { pci: pci, code: int(code) }
  test { line "NVRM: Xid (PCI:0000:61:00): 79, pid=1" expect gpu.xid { code: 79 } }
  test { line "NVRM: loaded" expect none }
}
extractor NcclWarn from app {
  match /NCCL WARN (?<msg>.*)$/
  emit nccl.warn { msg: msg }
  test { line "x NCCL WARN bad thing" expect nccl.warn { msg: "bad thing" } }
  test { line "NCCL INFO ok" expect none }
}
rule XidSymptom stage symptoms {
  for e: event gpu.xid
  symptom gpu.xid key e.pci priority 90 { summary: "Xid {e.code} on {e.node}: {e.pci}" }
}
rule NcclSymptom stage symptoms {
  for e: event nccl.warn
  symptom nccl.warn priority 10 { summary: "NCCL warning on {e.node}: {e.msg}" }
}
rule Demote stage final {
  for s: symptom nccl.warn
  where exists(x: symptom gpu.xid on other nodes)
  demote s because "downstream of an Xid"
}
)attr";

inline std::shared_ptr<const Program> small_program() {
  static std::shared_ptr<const Program> p = [] {
    auto loaded = compile_sources({{"fuzz.attr", kSmallCatalog}});
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s", loaded.diagnostics.render(false).c_str());
      std::abort();
    }
    std::string error;
    auto prog = Program::build(loaded.catalog, error);
    if (!prog) {
      std::fprintf(stderr, "%s\n", error.c_str());
      std::abort();
    }
    return prog;
  }();
  return p;
}

}  // namespace culprit::fuzz
