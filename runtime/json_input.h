// Reading JSON that comes from outside: bounded, strict, never recursive.
//
// Every JSON document Culprit takes from a user or a client (context.json,
// observations, service bodies) is parsed here, not with a bare
// nlohmann::json::parse, because
//   * a document nested 100,000 deep is valid JSON, and the library's
//     serializer, comparison and copy recurse once per level: the parse
//     stops at limits::kJsonDepth levels (base/limits.h) instead, so no
//     value that reaches the rest of the program is deeper than that;
//   * an object with the same key twice is ambiguous (the library keeps the
//     last one): it is refused, as unknown keys are, so a document cannot
//     say two things at once.
// The parse is nlohmann's own SAX parser (iterative) building the tree; on
// the first problem it stops and says what and where: a byte offset for
// syntax errors, a JSON pointer for the depth and duplicate-key limits.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace culprit {

struct JsonInputError {
  enum class Kind { None, Syntax, TooDeep, DuplicateKey };
  Kind kind = Kind::None;
  std::string message;   // a sentence: "not valid JSON: ...", "limit json_depth exceeded: ...", "duplicate key 'x' at /a"
  size_t byte = 0;       // Syntax: 1-based offset where the parser gave up
  std::string pointer;   // TooDeep / DuplicateKey: where (JSON pointer, cut to 200 bytes)
};

// Parses `text` into `out`. False with `error` set on invalid JSON (or
// invalid UTF-8), nesting deeper than `max_depth`, or a duplicate key.
bool parse_json_input(std::string_view text, nlohmann::json& out, JsonInputError& error,
                      size_t max_depth = 0 /* 0 = limits::kJsonDepth */);

// A short description of a JSON value for messages, never its whole text:
// strings quoted and cut to 64 bytes, numbers and literals as written,
// arrays and objects by type ("an array", "an object").
std::string describe_json_value(const nlohmann::json& v);

}  // namespace culprit
