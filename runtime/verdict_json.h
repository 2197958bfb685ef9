// The verdict as JSON: schema "culprit.verdict/v2" (docs/verdict.schema.json),
// or on request the previous "culprit.verdict/v1" (docs/verdict-v1.schema.json):
// v2 is v1 plus the `recommendation` object (what follows from the verdict,
// runtime/recovery.h) and `engine.recovery_table` (the digest of the table it
// came from); every other member is the same, byte for byte.
//
// Keys are written in a fixed order and every list is sorted, so the same
// Verdict always gives the same bytes. The derivation trail is included only
// when asked (`--explain`), since it is for people, not for machines.
//
// Thread-safety: pure functions of a const Verdict; nothing throws.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "runtime/model.h"

namespace culprit {

inline constexpr const char* kVerdictSchema = "culprit.verdict/v2";
inline constexpr const char* kVerdictSchemaV1 = "culprit.verdict/v1";

enum class VerdictSchema { V1, V2 };
// "v2", "2" or "culprit.verdict/v2" (and the same for v1); false otherwise.
bool parse_verdict_schema(const std::string& text, VerdictSchema& out);

nlohmann::ordered_json verdict_to_json(const Verdict& v, bool include_trail, VerdictSchema schema = VerdictSchema::V2);
// A field value as the verdict writes it: null, bool, number, string, a
// time as RFC 3339 text, a duration as text ("90s").
nlohmann::ordered_json value_to_json(const Value& v);
// Pretty-printed (2-space indent) with a trailing newline.
std::string verdict_to_json_text(const Verdict& v, bool include_trail, VerdictSchema schema = VerdictSchema::V2);
// Writes exactly the bytes of verdict_to_json_text to `out`, one symptom at a
// time: memory stays at one symptom's JSON whatever the size of the verdict.
void write_verdict_json(std::ostream& out, const Verdict& v, bool include_trail,
                        VerdictSchema schema = VerdictSchema::V2);

}  // namespace culprit
