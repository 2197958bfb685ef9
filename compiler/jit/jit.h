// The JIT: compiles the expressions of a catalog to native code with LLVM ORC.
//
// This header is the whole interface of the JIT and names no LLVM type; LLVM
// is included only by compiler/jit/codegen.cpp and compiler/jit/jit.cpp.
//
// What is compiled. Every top-level expression the engine evaluates through
// run_expression() (rule `where`s, query filters, group keys, action values,
// extractor field values; see top_level_expressions()) becomes one function
// with the C ABI of compiler/jit/abi.h. Numeric, bool, time and duration
// operations, comparisons, short-circuit logic and reads of custom event and
// symptom fields (see ValueLayout) are inlined; strings, regexes, built-in
// fields, records, queries and group aggregates are reached through the
// runtime's helpers. An expression the code generator cannot handle is left
// out (function() returns null for it) and is interpreted; Stats says which.
//
// Semantics. Native code returns exactly what the interpreter
// (runtime/interpreter.h) returns. It relies on the static types of the IR;
// when a value of another type turns up at run time, it bails out
// (CULPRIT_JIT_BAIL) and the caller interprets the expression instead.
//
// Caching. With Options::cache_dir set, the object code is stored there and
// reused by later processes. The key covers the code generator version, the
// LLVM version, the host CPU and its features, the IR and machine code levels, the
// value layout, the catalog digest and a fingerprint of the IR itself (the
// expressions and the kind schemas); an entry that is truncated, altered, was
// written for another key or holds object code LLVM rejects is a miss, never
// a crash, and is rebuilt.
//
// Errors. Nothing here throws (short of running out of memory) and no LLVM
// error reaches the caller as an abort: failures come back as a message, and
// the caller falls back to the interpreter. LLVM's fatal error handler is
// replaced by one that reports and exits with status 3.
//
// Thread-safety. All functions may be called from any thread. A
// CompiledCatalog is immutable; its functions may run on any number of
// threads at once (per-call state lives behind the ctx pointer). The machine
// code is freed (through its ORC ResourceTracker) when the last shared_ptr to
// the CompiledCatalog goes away, so holding one keeps the code alive for as
// long as any evaluation may use it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir.h"
#include "compiler/jit/abi.h"

namespace culprit::jit {

// Initializes LLVM's native target once per process. False (with the
// reason) when this host cannot generate code, or when the environment
// variable CULPRIT_JIT_DISABLE is set (to anything but 0); callers then
// interpret.
bool native_target_ready(std::string* why = nullptr);

// The LLVM version compiled against, e.g. "19.1.7".
std::string llvm_version();

// The host CPU name and its features (part of the object cache key), e.g.
// "znver3 +adx,+aes,...".
std::string host_cpu_id();

// A runtime helper of abi.h, registered into the JIT under `name`.
struct Helper {
  const char* name;
  void* address;
};

// The helpers the generated code may call (the names of abi.h); compile()
// refuses to run without every one of them.
const std::vector<std::string>& required_helpers();

// The top-level expressions of a catalog, in a fixed order: extractor field
// values; then per rule: the `for` query filter, the `where`s, the group
// keys, the filters of the rule's expression queries, and per action its
// node, key, priority, summary, field values, query filter, reason and value;
// last, both sides of every index key of the query plans (query_plan.h).
// The index of an expression in this list identifies its function.
std::vector<const ir::Expr*> top_level_expressions(const ir::Catalog& catalog);

// Where the parts of a culprit::Value lie in memory, as measured by the
// runtime that hosts the code (runtime/native_code.cpp). With it, generated
// code reads custom event and symptom fields in place instead of calling a
// helper per field; without it (usable == false) every read goes through
// culprit_jit_event_field / culprit_jit_symptom_field. Part of the cache key.
struct ValueLayout {
  bool usable = false;
  int32_t size = 0;           // sizeof(Value): the stride of a field array
  int32_t type = 0;           // uint8_t culprit::Type
  int32_t boolean = 0;        // bool
  int32_t integer = 0;        // int64_t (int, time, duration)
  int32_t real = 0;           // double
  int32_t string_data = 0;    // const char*: the string's bytes
  int32_t string_size = 0;    // size_t: its length
};

struct Options {
  std::string cache_dir;   // where object code is cached; "" = no cache
  int opt_level = 2;       // IR: 0 none; 1, 2 short pipelines (2 adds GVN); 3 LLVM's O2 pipeline
  int codegen_level = 0;   // machine code: 0 fast (FastISel, fast register allocator, no machine
                           // optimizations); 1, 2, 3 LLVM's Less, Default, Aggressive
  ValueLayout layout;      // how to read fields in place (see ValueLayout)
};

// What one compile() did, for `culprit check --timings` and the benchmarks.
struct Stats {
  size_t expressions = 0;                 // top-level expressions
  size_t compiled = 0;                    // of which run natively
  size_t distinct = 0;                    // distinct trees among them: each is compiled
                                          // once, its repeats alias its code
  std::vector<std::string> not_compiled;  // "file:line: why" for the others
  bool cache_hit = false;
  std::string cache_note;                 // why the cache was not used, if it was not
  // Cold compiles run on `threads` threads, one module each: the phase
  // times below are summed over threads; compile_wall_ms is the elapsed time.
  size_t threads = 0;
  double compile_wall_ms = 0;
  double codegen_ms = 0;                  // IR -> LLVM IR (and verification)
  double optimize_ms = 0;                 // LLVM optimization pipeline
  double emit_ms = 0;                     // LLVM machine code emission
  double cache_ms = 0;                    // reading or writing the cache entry
  double link_ms = 0;                     // linking into the JIT and resolving symbols
  size_t object_bytes = 0;
  // SHA-256 (hex) of the cache entry's payload that was linked: the object
  // code with its symbol table. Set only with a cache directory ("" else).
  std::string code_digest;
};

class CompiledCatalog {
 public:
  ~CompiledCatalog();
  CompiledCatalog(const CompiledCatalog&) = delete;
  CompiledCatalog& operator=(const CompiledCatalog&) = delete;

  // The function of top_level_expressions()[index], or null when that
  // expression was not compiled.
  CulpritJitFn function(size_t index) const {
    return index < functions_.size() ? functions_[index] : nullptr;
  }
  const Stats& stats() const { return stats_; }

  struct Resources;  // the JITDylib and ResourceTracker (LLVM types, in jit.cpp)

 private:
  friend std::shared_ptr<const CompiledCatalog> compile(const ir::Catalog&, const std::vector<Helper>&, const Options&,
                                                        std::string&);
  CompiledCatalog() = default;
  std::vector<CulpritJitFn> functions_;
  Stats stats_;
  std::unique_ptr<Resources> resources_;
};

// Compiles (or loads from the cache) native code for every top-level
// expression of `catalog`. Returns null with `error` set when it cannot
// (no native target, a missing helper, an LLVM failure).
std::shared_ptr<const CompiledCatalog> compile(const ir::Catalog& catalog, const std::vector<Helper>& helpers,
                                               const Options& options, std::string& error);

}  // namespace culprit::jit
