// Which catalog and evaluator a command runs, from its options, and opening
// it with the user told what happened.
//
// Options shared by every command that runs rules:
//   --rules PATH (repeatable)   add a rule directory or .attr file
//   --no-stdlib                 do not load the bundled catalog
//   --engine jit|interp         native code (default; also $CULPRIT_ENGINE) or the interpreter
//   --no-cache, --cache-dir DIR the compile cache
// The bundled catalog comes first; naming it again never loads it twice.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "runtime/attributor.h"

namespace culprit::cli {

// `spec` plus --no-stdlib, --engine, --no-cache, --cache-dir and, with
// `rules_option`, --rules.
ArgSpec with_catalog_options(ArgSpec spec, bool rules_option = true);

// Fills `out` from the options; `extra_paths` are rule paths given another
// way (test and check take them as positionals) and come after --rules.
// False with `err` set on a bad value or when there is nothing to load.
bool catalog_config(const Args& a, const std::vector<std::string>& extra_paths, AttributorConfig& out, std::string& err);

// Attributor::open with everything the user needs to know printed to
// stderr: the rules' diagnostics, a JIT that cannot run here, the tests the
// catalog fails (with `self_test`), and why it was refused, as
// "culprit CMD: ...", followed by `refusal` when a test failed (what the
// command will not do, and how to go on). Null when refused.
std::shared_ptr<const Attributor> open_attributor(const std::string& cmd, AttributorConfig config, bool self_test,
                                                  const std::string& refusal = "", AttributorStart* start = nullptr);

}  // namespace culprit::cli
