#include "cli/engine_choice.h"

#include <cstdlib>
#include <iostream>

namespace culprit::cli {

bool engine_choice(const Args& a, EngineChoice& out, std::string& err) {
  std::string engine = a.last("engine").value_or("");
  if (engine.empty())
    if (const char* e = std::getenv("CULPRIT_ENGINE"); e && *e) engine = e;
  if (engine.empty()) engine = "jit";
  if (engine != "jit" && engine != "interp" && engine != "interpreter") {
    err = "--engine must be jit or interp";
    return false;
  }
  out.jit = engine == "jit";
  out.jit_options.use_cache = !a.has("no-cache");
  if (auto d = a.last("cache-dir")) out.jit_options.cache_dir = *d;
  out.cache_dir = resolved_cache_dir(out.jit_options);
  return true;
}

ArgSpec with_engine(ArgSpec spec) {
  spec.flags.insert("no-cache");
  spec.options.insert("engine");
  spec.options.insert("cache-dir");
  return spec;
}

std::shared_ptr<const Program> build_program(std::shared_ptr<const ir::Catalog> catalog, const EngineChoice& engine,
                                             std::string& error) {
  auto program = Program::build(std::move(catalog), error, engine.jit ? jit_factory(engine.jit_options) : NativeCodeFactory{},
                                engine.cache_dir);
  if (program && engine.jit && !program->native())
    std::cerr << "culprit: warning: the JIT is unavailable (" << program->native_warning() << "); using the interpreter\n";
  return program;
}

}  // namespace culprit::cli
