// Rendering a command's argv as text a POSIX shell reads back as the same
// argv (the drain command the hand-off prints, emits, posts and stores;
// docs/recovery.md, "Hand-off").
//
// An argument made only of characters no shell treats specially
// ([A-Za-z0-9_./:=@%+,-]) is written as it is; any other one is put in
// single quotes, inside which a shell expands nothing, and each `'` of it
// becomes '\'' (close, an escaped quote, reopen). An argument of the form
// NAME=VALUE keeps its `NAME=` outside the quotes (`reason='culprit: x'`),
// which a shell joins into the same single word. The empty argument is ''.
//
// The text is for pasting into sh, bash, dash or zsh; it does not make a
// control character harmless to a terminal: callers put values through
// escape_for_terminal (base/text_util.h) first when they come from input.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace culprit::blueprint {

// One argument, quoted when it needs to be.
std::string shell_quote(std::string_view arg);

// The arguments, each through shell_quote, joined by single spaces.
std::string shell_command(const std::vector<std::string>& argv);

}  // namespace culprit::blueprint
