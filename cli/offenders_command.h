// `culprit offenders --store URL [--since 7d] [--min N]`: the nodes that were
// the culprit of repeated attempts (docs/recovery.md, "Repeat offenders").
#pragma once

namespace culprit::cli {

// Exit status: 0 the list was printed (empty or not); 2 bad usage; 3 the
// store cannot be opened or read.
int cmd_offenders(int argc, char** argv);

}  // namespace culprit::cli
