// The restricted pickle reader: the opcodes PyTorch's pickler and Python's
// pickle write for plain data, and the refusal of everything else. Streams
// are assembled opcode by opcode as torch/csrc/jit/serialization/pickler.cpp
// writes them (PROTO 2, BINUNICODE then BINPUT, EMPTY_DICT MARK ... SETITEMS).
#include <doctest/doctest.h>

#include <string>

#include "runtime/pickle_reader.h"

using namespace culprit;

namespace {

std::string s(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out += static_cast<char>(b);
  return out;
}
// BINUNICODE with its 4-byte length, then BINPUT n (as pushString does).
std::string str(const std::string& text, int memo) {
  std::string out = "X";
  uint32_t n = static_cast<uint32_t>(text.size());
  for (int i = 0; i < 4; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + text + s({'q', memo});
}
const std::string kProto = s({0x80, 0x02});

struct Decoded {
  bool ok;
  PickleDocument doc;
  PickleError err;
};
Decoded decode(const std::string& bytes) {
  Decoded d;
  d.ok = decode_pickle(bytes, d.doc, d.err);
  return d;
}

}  // namespace

TEST_CASE("pickle: a dict of a string, an int and a memoized key, as PyTorch writes it") {
  // {"a": 5, "b": "a"}: the second "a" is a BINGET of the first.
  std::string p = kProto + "}(" + str("a", 0) + s({'K', 5}) + str("b", 1) + s({'h', 0}) + "u.";
  Decoded d = decode(p);
  REQUIRE(d.ok);
  PickleDocument::Id v;
  REQUIRE(d.doc.lookup(d.doc.root(), "a", v));
  CHECK(d.doc.kind(v) == PickleDocument::Kind::Int);
  CHECK(d.doc.as_int(v) == 5);
  REQUIRE(d.doc.lookup(d.doc.root(), "b", v));
  CHECK(d.doc.as_string(v) == "a");
  CHECK_FALSE(d.doc.lookup(d.doc.root(), "c", v));
}

TEST_CASE("pickle: integers of every width, signs, floats, booleans, None, tuples") {
  // [300, -2, 2**40, -5 (LONG1 of 1 byte), 0.75, True, False, None, ("x", "y")]
  std::string p = kProto + "](" + s({'M', 0x2c, 0x01}) + s({'J', 0xfe, 0xff, 0xff, 0xff}) +
                  s({0x8a, 8, 0, 0, 0, 0, 0, 1, 0, 0}) + s({0x8a, 1, 0xfb}) + s({'G', 0x3f, 0xe8, 0, 0, 0, 0, 0, 0}) +
                  s({0x88, 0x89, 'N'}) + str("x", 0) + str("y", 1) + s({0x86}) + "e.";
  Decoded d = decode(p);
  REQUIRE(d.ok);
  const auto& items = d.doc.items(d.doc.root());
  REQUIRE(items.size() == 9);
  CHECK(d.doc.as_int(items[0]) == 300);
  CHECK(d.doc.as_int(items[1]) == -2);
  CHECK(d.doc.as_int(items[2]) == (int64_t{1} << 40));
  CHECK(d.doc.as_int(items[3]) == -5);
  CHECK(d.doc.as_float(items[4]) == doctest::Approx(0.75));
  CHECK(d.doc.as_bool(items[5]));
  CHECK_FALSE(d.doc.as_bool(items[6]));
  CHECK(d.doc.kind(items[7]) == PickleDocument::Kind::None);
  REQUIRE(d.doc.kind(items[8]) == PickleDocument::Kind::Tuple);
  CHECK(d.doc.as_string(d.doc.items(items[8])[1]) == "y");
}

TEST_CASE("pickle: torch.jit._pickle's list builders and type tags are applied as data") {
  // build_intlist([1, 2]) and restore_type_tag({}, "Dict[str, Any]")
  std::string p = kProto + "](" + "ctorch.jit._pickle\nbuild_intlist\n" + s({'q', 0}) + "(" + "](" + s({'K', 1, 'K', 2}) +
                  "etR" + "ctorch.jit._pickle\nrestore_type_tag\n" + s({'q', 1}) + "}" + str("Dict[str, Any]", 2) +
                  s({0x86}) + "Re.";
  Decoded d = decode(p);
  REQUIRE_MESSAGE(d.ok, d.err.message);
  const auto& items = d.doc.items(d.doc.root());
  REQUIRE(items.size() == 2);
  CHECK(d.doc.kind(items[0]) == PickleDocument::Kind::List);
  CHECK(d.doc.items(items[0]).size() == 2);
  CHECK(d.doc.kind(items[1]) == PickleDocument::Kind::Dict);
}

TEST_CASE("pickle: Python's protocol 4 framing, short strings and MEMOIZE") {
  // pickle.dumps({"k": ["v", "v"]}, protocol=4)
  std::string p = s({0x80, 0x04, 0x95, 0x13, 0, 0, 0, 0, 0, 0, 0, '}', 0x94, 0x8c, 0x01, 'k', 0x94, ']', 0x94, '(', 0x8c,
                     0x01, 'v', 0x94, 'h', 0x03, 'e', 's', '.'});
  Decoded d = decode(p);
  REQUIRE_MESSAGE(d.ok, d.err.message);
  PickleDocument::Id v;
  REQUIRE(d.doc.lookup(d.doc.root(), "k", v));
  REQUIRE(d.doc.items(v).size() == 2);
  CHECK(d.doc.as_string(d.doc.items(v)[1]) == "v");
}

TEST_CASE("pickle: every opcode that could build objects or run code is refused with its code") {
  struct Case {
    std::string bytes, code, says;
  };
  const Case cases[] = {
      {kProto + "cos\nsystem\n" + str("id", 0) + s({0x85}) + "R.", "PK003", "GLOBAL os.system is not allowed"},
      {kProto + "cbuiltins\neval\n.", "PK003", "builtins.eval"},
      {kProto + "ctorch.jit._pickle\nbuild_tensor_from_id\n.", "PK003", "build_tensor_from_id"},
      {kProto + "}" + "}b.", "PK002", "BUILD"},
      {kProto + "(ios\nsystem\n.", "PK002", "INST"},
      {kProto + "}" + str("x", 0) + "Q.", "PK002", "BINPERSID"},
      {kProto + str("os", 0) + str("system", 1) + s({0x93}) + ".", "PK002", "STACK_GLOBAL"},
      {kProto + ")" + s({0x81}) + ".", "PK002", "NEWOBJ"},
      {kProto + s({0xff}) + ".", "PK002", "byte 0xff is not a pickle opcode"},
      {"(dp0\nS'a'\n.", "PK008", "does not start with PROTO"},
      {s({0x80, 0x06, '.'}), "PK008", "protocol 6"},
      {kProto + "}(" + str("a", 0), "PK001", "truncated"},
      {kProto + s({'X', 0xff, 0xff, 0, 0}) + "ab", "PK001", "truncated"},
      {kProto + "]]" + ".", "PK004", "STOP with 2 values"},
      {kProto + s({'h', 7}) + ".", "PK005", "memo entry 7"},
      {kProto + "}" + s({'K', 1}) + "a.", "PK004", "APPEND needs a list"},
      {kProto + "]" + s({'K', 1, 'K', 2}) + "s.", "PK004", "SETITEM needs a dict"},
      {kProto + s({0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0}) + ".", "PK007", "9 bytes"},
      {kProto + "e.", "PK004", "MARK"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.code);
    CAPTURE(c.says);
    Decoded d = decode(c.bytes);
    CHECK_FALSE(d.ok);
    CHECK(d.err.code == c.code);
    CHECK(d.err.message.rfind(c.code + " at byte ", 0) == 0);
    CHECK(d.err.message.find(c.says) != std::string::npos);
    CHECK(d.doc.size() == 0);  // nothing of a refused stream is kept
  }
}

TEST_CASE("pickle: a list that holds itself is a cycle of indices, not a crash or a leak") {
  std::string p = kProto + "]" + s({'q', 0, 'h', 0, 'a'}) + ".";
  Decoded d = decode(p);
  REQUIRE(d.ok);
  const auto& items = d.doc.items(d.doc.root());
  REQUIRE(items.size() == 1);
  CHECK(items[0] == d.doc.root());
}

TEST_CASE("pickle: looks_like_pickle knows the header of protocols 2 to 5 only") {
  CHECK(looks_like_pickle(s({0x80, 0x02, '}'})));
  CHECK(looks_like_pickle(s({0x80, 0x05})));
  CHECK_FALSE(looks_like_pickle(s({0x80, 0x01})));
  CHECK_FALSE(looks_like_pickle("{\"version\": \"2.4\"}"));
  CHECK_FALSE(looks_like_pickle(""));
}
