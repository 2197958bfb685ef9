// The canonical layout of an .attr file (`culprit fmt`).
//
// The formatter works on the lexer's tokens and the comments between them,
// so it keeps every token and every comment and changes only whitespace:
//   * indentation: two spaces per open '{'; a line that continues a
//     statement (an operand on its own line, a query's `where` under a
//     `demote`) four more; the `and`/`or` lines of a `where` two more than
//     the `where`; a line inside an open '(' or '[' four more than the line
//     that opened it (its closing one as much as that line);
//   * within a line one space between tokens, none before , : ) ] . or
//     after ( [ . and unary '-', none between a function's name and its '(',
//     "{ a: 1 }" and "{}" for braces;
//   * line breaks stay where they were written; runs of blank lines become
//     one; a blank line separates top-level declarations; a trailing
//     comment is put two spaces after its line; no trailing whitespace;
//     one final newline.
// The result is a fixed point (formatting it again changes nothing) and
// lexes to the same tokens as the input; both are checked on every call.
// Thread-safe (lexing is serialized behind the parser's lock).
#pragma once

#include <string>

#include "compiler/diagnostics.h"

namespace culprit {

// Formats `source` into `out`. False when the file does not parse (its
// syntax errors go to `diags`) or when, against expectations, the layout
// would change a token (then `out` is left empty and an internal error is
// reported): a file is never rewritten into something else.
bool format_attr(std::shared_ptr<const SourceFile> source, std::string& out, Diagnostics& diags);

}  // namespace culprit
