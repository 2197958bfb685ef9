// A fast path for the common observation: one flat JSON object describing a
// log line, as sent line by line in NDJSON by collectors and the service's
// clients, e.g.
//   {"host": "node-02", "source": "kernel", "ts": "2026-11-30T02:05:01Z", "text": "NVRM: Xid ...", "line": 88}
//
// Contract: fast_parse_observation() either fills `out` exactly as
// parse_observation(nlohmann::json::parse(text)) would, and returns true, or
// returns false and leaves the decision to that slow path, which also
// produces every error message. It returns false for anything it does not
// handle itself: metric observations, nested values, duplicate or unknown
// keys, non-integer numbers, invalid UTF-8, malformed JSON and any value the
// slow path would reject. So callers keep one source of truth for the schema
// and its diagnostics, and the fast path only has to be right when it says
// yes (tests/runtime/observation_fast_parse_test.cpp compares both on valid
// and invalid lines).
//
// Thread-safety: a pure function.
#pragma once

#include <string_view>

#include "runtime/observation.h"

namespace culprit {

bool fast_parse_observation(std::string_view text, Observation& out);

}  // namespace culprit
