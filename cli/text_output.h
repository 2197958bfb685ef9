// How the CLI renders a verdict as text: colour and width from the options
// and the environment, the same for local and remote diagnose.
//
//   --color auto|always|never   auto: colour only on a terminal, and never
//                               when $NO_COLOR is set (non-empty) or $TERM
//                               is "dumb" (https://no-color.org)
//   --width N                   columns to fit; default $COLUMNS, else the
//                               terminal's width, else 0 (never cut)
//   --height N                  lines to fit: the report is shortened until
//                               the cause block stays on screen; default
//                               $LINES, else the terminal's height, else 0
//                               (never shortened)
//   --cascade, --explain        every symptom instead of one line per group
#pragma once

#include <string>

#include "cli/args.h"
#include "runtime/verdict_text.h"

namespace culprit::cli {

// Fills `out` from the options; false with `err` on a bad value.
bool text_options(const Args& a, TextOptions& out, std::string& err);

// Whether text written to `fd` gets colour when nothing asks otherwise:
// `fd` is a terminal, $NO_COLOR is unset or empty, and $TERM is not "dumb".
// Compiler and configuration diagnostics on stderr follow it.
bool auto_color(int fd);

}  // namespace culprit::cli
