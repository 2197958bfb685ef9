// Reading JSON that comes from outside: bounded, strict, never recursive.
//
// Every JSON document Culprit takes from a user, a client or a remote
// service (context.json, observations, service bodies, Loki, Prometheus and
// Kubernetes answers) is parsed here, not with a bare
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
// The same into an ordered tree (key order kept, for documents re-emitted
// as they came, such as a verdict).
bool parse_json_input(std::string_view text, nlohmann::ordered_json& out, JsonInputError& error,
                      size_t max_depth = 0 /* 0 = limits::kJsonDepth */);

// An answer of a remote service (Loki, Prometheus, the Kubernetes API, a
// `culprit serve`): parse_json_input's bounds, and an object at the top.
// A remote is as untrusted as a user: a proxy's HTML error page, a
// truncated body or a hostile nesting gets a sentence in `error`, never an
// exception or a recursion.
bool parse_remote_json(std::string_view text, nlohmann::json& out, std::string& error);
bool parse_remote_json(std::string_view text, nlohmann::ordered_json& out, std::string& error);

// The member `key` of `j` when `j` is an object and the member a string,
// else `fallback`. json::value() throws when the member has another type;
// an answer's fields are read with this instead.
std::string string_member_or(const nlohmann::json& j, std::string_view key, std::string_view fallback = {});
std::string string_member_or(const nlohmann::ordered_json& j, std::string_view key, std::string_view fallback = {});

// A short description of a JSON value for messages, never its whole text:
// strings quoted and cut to 64 bytes, numbers and literals as written,
// arrays and objects by type ("an array", "an object").
std::string describe_json_value(const nlohmann::json& v);

}  // namespace culprit
