// The verdict as JSON: schema "culprit.verdict/v1" (docs/verdict.schema.json).
//
// Keys are written in a fixed order and every list is sorted, so the same
// Verdict always gives the same bytes. The derivation trail is included only
// when asked (`--explain`), since it is for people, not for machines.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "runtime/model.h"

namespace culprit {

inline constexpr const char* kVerdictSchema = "culprit.verdict/v1";

nlohmann::ordered_json verdict_to_json(const Verdict& v, bool include_trail);
// A field value as the verdict writes it: null, bool, number, string, a
// time as RFC 3339 text, a duration as text ("90s").
nlohmann::ordered_json value_to_json(const Value& v);
// Pretty-printed (2-space indent) with a trailing newline.
std::string verdict_to_json_text(const Verdict& v, bool include_trail);
// Writes exactly the bytes of verdict_to_json_text to `out`, one symptom at a
// time: memory stays at one symptom's JSON whatever the size of the verdict.
void write_verdict_json(std::ostream& out, const Verdict& v, bool include_trail);

}  // namespace culprit
