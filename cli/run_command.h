// `culprit run --config FILE (--once|--watch) [--store URL] [--service URL]`:
// the blueprint (docs/blueprint.md).
#pragma once

namespace culprit::cli {

// Exit status: 0 every discovered attempt attributed or already stored;
// 1 some attempt failed (left for the next run); 2 bad usage or
// configuration, or a catalog that does not compile or fails its tests;
// 3 the store, the service or discovery could not be used.
int cmd_run(int argc, char** argv);

}  // namespace culprit::cli
