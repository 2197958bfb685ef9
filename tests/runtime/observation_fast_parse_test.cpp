// The fast observation reader must agree with the schema's reference parser
// (parse_observation over nlohmann::json) whenever it says yes, and say yes
// for the ordinary shapes collectors send.
#include "runtime/observation_fast_parse.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "runtime/observation.h"

using namespace culprit;

namespace {

// The reference: what the service does without the fast path.
bool slow(const std::string& text, Observation& o) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return false;
  std::string why;
  return parse_observation(j, o, why);
}

void check_same(const Observation& a, const Observation& b) {
  CHECK(a.host == b.host);
  CHECK(a.source == b.source);
  CHECK(a.ts == b.ts);
  CHECK(a.is_metric == b.is_metric);
  CHECK(a.text == b.text);
  CHECK(a.file == b.file);
  CHECK(a.line == b.line);
  CHECK(a.offset == b.offset);
}

}  // namespace

TEST_CASE("ordinary log observations take the fast path and equal the reference") {
  const std::vector<std::string> lines = {
      R"({"host": "node-02", "source": "kernel", "ts": "2026-11-30T02:05:01Z", "text": "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."})",
      R"({"host":"node-01","source":"app","text":"plain","file":"logs/node-01/app.log","line":12,"offset":0})",
      R"(  {"text": "quote \" backslash \\ slash \/ tab \t nl \n cr \r bs \b ff \f", "source": "app", "host": "n1"}  )",
      R"({"host": "n1", "source": "app", "ts": null, "text": "unicode \u00e9 \u20ac \ud83d\ude00 raw é € 😀"})",
      R"({"host": "n1", "source": "app", "text": "", "offset": -0})",
      R"({"host": "n1", "source": "app", "text": "nul \u0000 inside"})",
  };
  for (const auto& l : lines) {
    CAPTURE(l);
    Observation fast, ref;
    REQUIRE(slow(l, ref));
    REQUIRE(fast_parse_observation(l, fast));
    check_same(fast, ref);
  }
}

TEST_CASE("what the fast path leaves to the reference parser") {
  const std::vector<std::string> lines = {
      // valid, but not handled here
      R"({"host": "n1", "source": "dcgm", "ts": "2026-11-30T02:05:01Z", "metric": "DCGM_FI_DEV_XID_ERRORS", "value": 79})",
      R"({"host": "n1", "source": "app", "text": "x", "line": 1.0})",
      R"({"host": "n1", "source": "app", "text": "x", "line": 1e2})",
      R"({"host": "n1", "source": "app", "text": "a", "text": "b"})",
      // invalid: the reference parser produces the error message
      R"({"host": "n1", "source": "app"})",
      R"({"host": "n1", "source": "app", "text": "x", "extra": 1})",
      R"({"host": "bad host", "source": "app", "text": "x"})",
      R"({"host": "n1", "source": "App", "text": "x"})",
      R"({"host": "n1", "source": "app", "text": "x", "ts": "yesterday"})",
      R"({"host": "n1", "source": "app", "text": "x", "line": 0})",
      R"({"host": "n1", "source": "app", "text": "x", "line": 01})",
      R"({"host": "n1", "source": "app", "text": "x", "offset": -3})",
      R"({"host": "n1", "source": "app", "text": 5})",
      R"({"host": "n1", "source": "app", "text": "x", "file": null})",
      R"({"host": "n1", "source": "app", "text": "x"} trailing)",
      R"({"host": "n1", "source": "app", "text": "x",})",
      R"({"host": "n1", "source": "app", "text": "tab	raw"})",
      R"({"host": "n1", "source": "app", "text": "lone \ud800 surrogate"})",
      R"({"host": "n1", "source": "app", "text": "bad \x escape"})",
      "{\"host\": \"n1\", \"source\": \"app\", \"text\": \"invalid \xff utf-8\"}",
      "{\"host\": \"n1\", \"source\": \"app\", \"text\": \"overlong \xc0\xaf\"}",
      "{\"host\": \"n1\", \"source\": \"app\", \"text\": \"surrogate \xed\xa0\x80\"}",
      R"({"host": "n1", "source": "app", "text": "x")",
      R"([])", R"({})", "", "null",
  };
  for (const auto& l : lines) {
    CAPTURE(l);
    Observation fast;
    CHECK_FALSE(fast_parse_observation(l, fast));
  }
}

TEST_CASE("random lines: whenever the fast path accepts, the reference agrees exactly") {
  std::mt19937 rng(20261130);
  const std::vector<std::string> pieces = {
      "a", "Z", "9", " ", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\u0041", "\\u00e9", "\\ud83d\\ude00", "\\ud800",
      "\\udc00", "\\x", "\"", "\t", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff", "\xc0\xaf", "\xed\xa0\x80",
      "\xf4\x90\x80\x80", "{", "}", ":", ","};
  const std::vector<std::string> extras = {
      "", ", \"line\": 7", ", \"line\": 0", ", \"offset\": 12", ", \"offset\": 1.5", ", \"ts\": null",
      ", \"ts\": \"2026-11-30T02:05:01.5+01:00\"", ", \"ts\": \"bad\"", ", \"file\": \"f.log\"", ", \"host\": \"n2\"",
      ", \"labels\": {}", ", \"line\": 123456789012345678901"};
  int accepted = 0, valid = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    int n = static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) text += pieces[rng() % pieces.size()];
    const std::string& extra = extras[rng() % extras.size()];
    std::string line = "{\"host\": \"node-0" + std::to_string(rng() % 3) + "\", \"source\": \"app\", \"text\": \"" + text +
                       "\"" + extra + "}";
    CAPTURE(line);
    Observation fast, ref;
    bool f = fast_parse_observation(line, fast);
    bool s = slow(line, ref);
    if (f) {
      ++accepted;
      REQUIRE(s);
      check_same(fast, ref);
    }
    // Valid lines are all taken by the fast path, except those with a
    // duplicate key (which it leaves to the reference on purpose).
    if (s && extra != ", \"host\": \"n2\"") {
      ++valid;
      CHECK(f);
    }
  }
  CHECK(valid > 1000);  // the generator must exercise the accepting side too
  CHECK(accepted >= valid);
}
