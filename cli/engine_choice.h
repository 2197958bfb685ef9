// Which evaluator a command uses, from its options: `--engine jit|interp`
// (else $CULPRIT_ENGINE, else jit), `--no-cache`, `--cache-dir DIR`; and the
// Program built with it. Shared by every command that runs rules.
#pragma once

#include <memory>
#include <string>

#include "cli/args.h"
#include "compiler/ir.h"
#include "runtime/native_code.h"
#include "runtime/program.h"

namespace culprit::cli {

struct EngineChoice {
  bool jit = true;
  JitOptions jit_options;
  std::string cache_dir;  // "" when caching is off
};

// Reads the engine options; false with `err` set on a bad value.
bool engine_choice(const Args& a, EngineChoice& out, std::string& err);

// `spec` plus the engine options above.
ArgSpec with_engine(ArgSpec spec);

// Builds the Program for `catalog` with the chosen evaluator; prints the one
// warning of a JIT that cannot run here (the interpreter then runs).
std::shared_ptr<const Program> build_program(std::shared_ptr<const ir::Catalog> catalog, const EngineChoice& engine,
                                             std::string& error);

}  // namespace culprit::cli
