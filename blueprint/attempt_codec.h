// An Attempt as one JSON document, and back: how a discovered attempt waits
// in the shared work queue (blueprint/store/work_queue.h) until a replica
// that did not discover it collects and attributes it.
//
// The document holds every field of Attempt, the context in the form the
// service accepts (runtime/bundle.h context_to_json), so that
// attempt_from_json(attempt_to_json(a)) equals `a`
// (tests/blueprint/attempt_codec_test.cpp holds the round trip). It is an
// internal format between replicas of the same culprit version, versioned by
// its "v" member; a document of another version is refused, never guessed.
//
// Thread-safety: pure functions. Errors are values (false + message).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "blueprint/attempt.h"

namespace culprit::blueprint {

nlohmann::ordered_json attempt_to_json(const Attempt& a);
bool attempt_from_json(const std::string& text, Attempt& out, std::string& error);

}  // namespace culprit::blueprint
