// runtime/json_input: the bounded, strict JSON reader every outside document
// goes through (issue 12: a context nested 65,000 deep crashed the service).
#include "runtime/json_input.h"

#include <doctest/doctest.h>

#include <string>

#include "base/limits.h"

using namespace culprit;

namespace {
std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }
}  // namespace

TEST_CASE("parse_json_input: the same tree as nlohmann's parser for ordinary documents") {
  nlohmann::json j;
  JsonInputError e;
  const char* text = R"({"a": [1, -2, 3.5, true, null, "x\u00e9"], "b": {"c": {}}, "d": 18446744073709551615})";
  REQUIRE(parse_json_input(text, j, e));
  CHECK(j == nlohmann::json::parse(text));
  CHECK(j["d"].is_number_unsigned());
}

TEST_CASE("parse_json_input: nesting stops at the limit, with a pointer to where") {
  nlohmann::json j;
  JsonInputError e;
  CHECK(parse_json_input(nested(limits::kJsonDepth), j, e));
  CHECK_FALSE(parse_json_input(nested(limits::kJsonDepth + 1), j, e));
  CHECK(e.kind == JsonInputError::Kind::TooDeep);
  CHECK(e.message.find("limit json_depth exceeded") != std::string::npos);
  // 100,000 levels: refused without recursion (this crashed before).
  CHECK_FALSE(parse_json_input("{\"nodes\":" + nested(100000) + "}", j, e));
  CHECK(e.kind == JsonInputError::Kind::TooDeep);
  CHECK(e.pointer.rfind("/nodes/0/0", 0) == 0);
  CHECK(e.pointer.size() <= 200);
  // A smaller limit when asked.
  CHECK_FALSE(parse_json_input(R"({"a": {"b": 1}})", j, e, 1));
  CHECK(e.pointer == "/a");
}

TEST_CASE("parse_json_input: a repeated key is refused at its pointer") {
  nlohmann::json j;
  JsonInputError e;
  CHECK_FALSE(parse_json_input(R"({"x": [{"k": 1, "k": 2}]})", j, e));
  CHECK(e.kind == JsonInputError::Kind::DuplicateKey);
  CHECK(e.pointer == "/x/0/k");
  CHECK(e.message.find("duplicate key 'k'") != std::string::npos);
  CHECK(parse_json_input(R"({"k": 1, "o": {"k": 2}})", j, e));  // the same key in another object is fine
}

TEST_CASE("parse_json_input: syntax errors keep the byte offset and say where and what, in plain words") {
  nlohmann::json j;
  JsonInputError e;
  CHECK_FALSE(parse_json_input("{\"a\": ", j, e));
  CHECK(e.kind == JsonInputError::Kind::Syntax);
  CHECK(e.message.rfind("not valid JSON at column 7: unexpected end of input", 0) == 0);
  CHECK(e.message.find("json.exception") == std::string::npos);
  CHECK(e.message.find("syntax error while parsing") == std::string::npos);
  CHECK(e.byte > 0);
  // Two documents on one line: what `curl -d` makes of NDJSON.
  CHECK_FALSE(parse_json_input("{\"a\": 1}{\"b\": 2}", j, e));
  CHECK(e.message == "not valid JSON at column 9: unexpected '{'; expected end of input");
  // Several lines: the line is said.
  CHECK_FALSE(parse_json_input("{\n\"a\": ]\n}", j, e));
  CHECK(e.message.rfind("not valid JSON at line 2, column 6: unexpected ']'", 0) == 0);
  CHECK_FALSE(parse_json_input("{\"a\": \"\xff\"}", j, e));
  CHECK(e.kind == JsonInputError::Kind::Syntax);
  CHECK_FALSE(parse_json_input("[1] trailing", j, e));
}

TEST_CASE("describe_json_value: short, whatever the value") {
  CHECK(describe_json_value(nlohmann::json::parse(nested(5))) == "an array");
  CHECK(describe_json_value(nlohmann::json::object()) == "an object");
  CHECK(describe_json_value(42) == "42");
  CHECK(describe_json_value(std::string(1000, 'a')).size() <= 70);
}

TEST_CASE("parse_remote_json: an object, or a sentence; never a throw or a deep tree") {
  nlohmann::json j;
  std::string err;
  CHECK(parse_remote_json(R"({"status":"success","data":{"result":[]}})", j, err));
  CHECK(j["data"]["result"].is_array());

  nlohmann::ordered_json o;
  CHECK(parse_remote_json(R"({"z":1,"a":2})", o, err));
  CHECK(o.dump() == R"({"z":1,"a":2})");  // the answer's key order is kept

  CHECK_FALSE(parse_remote_json("<html>502 Bad Gateway</html>", j, err));
  CHECK(err.rfind("not valid JSON", 0) == 0);
  CHECK_FALSE(parse_remote_json(R"([1,2])", j, err));
  CHECK(err == "the answer is a JSON array, not an object");
  CHECK_FALSE(parse_remote_json(R"({"a":1,"a":2})", o, err));
  CHECK(err.find("duplicate key 'a'") != std::string::npos);
  std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  CHECK_FALSE(parse_remote_json(deep, j, err));
  CHECK(err.find("json_depth") != std::string::npos);
}

TEST_CASE("string_member_or: a member of the wrong type is the fallback, not an exception") {
  auto j = nlohmann::json::parse(R"({"status":5,"error":"boom","data":null})");
  CHECK(string_member_or(j, "status", "?") == "?");
  CHECK(string_member_or(j, "error") == "boom");
  CHECK(string_member_or(j, "missing", "x") == "x");
  CHECK(string_member_or(j["data"], "status", "none") == "none");
  CHECK(string_member_or(nlohmann::json::array(), "status").empty());
}
