// `culprit match --source SOURCE LINE|-`: what the catalog makes of one log line.
#pragma once

namespace culprit::cli {

// argv[1] is "match". Exit status: 0 at least one extractor matched (every
// line, with `-`), 1 none did, 2 bad usage or rules that do not compile.
int cmd_match(int argc, char** argv);

}  // namespace culprit::cli
