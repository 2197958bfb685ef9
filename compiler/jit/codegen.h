// Internal to the JIT (compiler/jit/): IR -> LLVM IR. Includes LLVM, so it
// must not be included outside compiler/jit/codegen.cpp and jit.cpp; the
// rest of Culprit uses compiler/jit/jit.h.
//
// Thread-safety: generate() works on the LLVMContext it is given, which
// must not be used by another thread meanwhile. Errors are values
// (`error`); nothing throws.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "compiler/ir.h"
#include "compiler/jit/jit.h"

namespace culprit::jit::detail {

struct Generated {
  std::unique_ptr<llvm::Module> module;
  std::vector<bool> compiled;             // by top-level index
  std::vector<std::string> not_compiled;  // "file:line: why", for the others
};

// The exported symbol of top-level expression `index`. `prefix` is derived
// from the catalog digest and the IR fingerprint, so names are unique per
// catalog generation yet the same in every process (cacheable).
std::string symbol_name(const std::string& prefix, size_t index);

// Builds one module holding a function per compilable expression of
// `exprs` (see abi.h for the calling convention). Never throws; an
// expression it cannot compile is reported in not_compiled. The module is
// verified: a module that fails verification is not returned (error set).
// Only the expressions at `indices` go into this module (the JIT compiles
// several modules in parallel); `compiled` is still indexed like `exprs`.
// `copies[i]` lists the other expressions whose tree is identical to that
// of `i`: they get no code of their own, only an alias of `i`'s symbol (and
// share its fate: compiled, or reported each with its own location).
// With `layout.usable`, custom fields are read in place (see
// jit::ValueLayout); the catalog's schemas are then baked into the module.
Generated generate(llvm::LLVMContext& context, const ir::Catalog& catalog, const std::vector<const ir::Expr*>& exprs,
                   const std::vector<size_t>& indices, const std::vector<std::vector<size_t>>& copies,
                   const std::string& module_name, const std::string& prefix, const ValueLayout& layout,
                   std::string& error);

}  // namespace culprit::jit::detail
