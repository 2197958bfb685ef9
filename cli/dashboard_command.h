// `culprit dashboard --store URL [--listen HOST:PORT]`: the read-only web
// view of a blueprint store (docs/dashboard.md).
#pragma once

#include <string>

namespace culprit::cli {

// A store URL a reader may be given: sqlite:PATH or postgresql://... without
// a password in it (it would show in the process list). False with `error`.
bool check_store_url(const std::string& url, std::string& error);

// Parses the options, then serves until SIGTERM or SIGINT. Returns 0 when
// stopped, 2 on bad usage or an address that cannot be bound, 3 when the
// store cannot be opened.
int cmd_dashboard(int argc, char** argv);

}  // namespace culprit::cli
