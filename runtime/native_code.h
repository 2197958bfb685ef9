// The JIT evaluator as the runtime sees it.
//
// jit_factory() gives Program::build a NativeCodeFactory that compiles every
// top-level expression of the catalog with the JIT (compiler/jit/jit.h) and
// wraps the result in a NativeCode: run() looks the expression up, calls its
// native function with a per-call context, and returns false (so that the
// interpreter runs it) for an expression that was not compiled or whose code
// bailed out on an unexpected dynamic type. Either way the value is the
// interpreter's (runtime/interpreter.h is the reference).
//
// This file also implements the C helpers of compiler/jit/abi.h: field and
// record reads, strings, regexes, queries and group aggregates, each the
// interpreter's code path over the same Env.
//
// Ownership and threads: the NativeCode holds the compiled code (a
// shared_ptr); the Program holds the NativeCode; evaluations hold the
// Program. So code is freed only after the last evaluation that could use it
// is gone. NativeCode is immutable; run() may be called from any number of
// threads at once, each with its own Env.
#pragma once

#include <string>

#include "compiler/jit/jit.h"
#include "runtime/interpreter.h"
#include "runtime/program.h"

namespace culprit {

struct JitOptions {
  bool use_cache = true;   // keep object code (and let Program keep Hyperscan databases) in cache_dir
  std::string cache_dir;   // "" = the default (compiler/jit/cache.h: default_directory())
  int opt_level = 2;       // LLVM IR optimization level 0..3 (jit::Options::opt_level)
  int codegen_level = 0;   // LLVM machine code level 0..3 (jit::Options::codegen_level)
  bool fields_in_place = true;  // read custom fields in place (jit::ValueLayout); false: through helpers
};

// A factory for Program::build that compiles with the JIT. It returns null
// with the reason when the JIT cannot run (no native target, LLVM failure);
// the Program then interprets everything. Never throws.
NativeCodeFactory jit_factory(const JitOptions& options = {});

// The cache directory `options` resolve to ("" = no caching).
std::string resolved_cache_dir(const JitOptions& options);

// Whether this host can run the JIT at all (initializes LLVM's native target
// once); `why` says why not.
bool jit_available(std::string& why);

// Statistics of the native code attached to a Program (null when the Program
// interprets): counts of compiled expressions, compile phases, cache use.
const jit::Stats* native_stats(const NativeCode* code);

}  // namespace culprit
