// `culprit serve [options]`: the attribution service (docs/service.md).
#pragma once

namespace culprit::cli {

// Parses the options, then runs the service until SIGTERM or SIGINT.
// Returns 0 when stopped by a signal, 1 when the catalog fails one of its
// inline tests, 2 on bad usage, rules that do not compile or an address that
// cannot be bound.
int cmd_serve(int argc, char** argv);

}  // namespace culprit::cli
