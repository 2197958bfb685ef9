// `culprit fmt [--check] PATH...`: the canonical layout of .attr files.
#pragma once

namespace culprit::cli {

// argv[1] is "fmt". Exit status: 0 formatted (or, with --check, already
// canonical), 1 --check found files to reformat, 2 bad usage, unreadable
// files or files that do not parse.
int cmd_fmt(int argc, char** argv);

}  // namespace culprit::cli
