// A restricted reader of Python pickles: the data that PyTorch's Flight
// Recorder dumps hold, and nothing that could run code.
//
// PyTorch writes a Flight Recorder dump with its own C++ pickler
// (torch/csrc/jit/serialization/pickler.cpp, called by pickle_str in
// torch/csrc/distributed/c10d/TraceUtils.h / FlightRecorderDetail.hpp):
// protocol 2, dictionaries, lists, tuples, strings, integers, floats,
// booleans and None, with strings memoized (BINPUT / BINGET). A dump that a
// user loaded in Python and saved again (pickle.dump, protocols 2 to 5) adds
// framing and other memo and string opcodes. This reader accepts exactly
// those opcodes:
//
//   PROTO FRAME STOP MARK  EMPTY_DICT EMPTY_LIST EMPTY_TUPLE
//   SETITEM SETITEMS APPEND APPENDS  TUPLE TUPLE1 TUPLE2 TUPLE3
//   BININT BININT1 BININT2 LONG1 (at most 8 bytes)  BINFLOAT
//   BINUNICODE SHORT_BINUNICODE BINUNICODE8  NONE NEWTRUE NEWFALSE
//   BINPUT LONG_BINPUT MEMOIZE BINGET LONG_BINGET
//   GLOBAL and REDUCE only for torch.jit._pickle's pure list builders
//   (build_intlist, build_doublelist, build_boollist) and restore_type_tag,
//   which older PyTorch pickles wrap around typed containers: each returns
//   its argument, so they are applied here as data, never looked up.
//
// Every other opcode (object construction, persistent ids, INST, OBJ,
// BUILD, any other GLOBAL, the text protocol 0 forms) is refused with a
// coded error naming it and its byte offset; so is a truncated or
// malformed stream. Nothing is ever executed or imported.
//
// Bounds: the input is at most limits::kPickleBytes; at most
// limits::kPickleValues values are made (every opcode makes at most one, so
// this also bounds the work); containers share children by index, so a
// BINGET never copies and a self-referencing container is only a cycle of
// indices, freed with the document. Decoding is iterative (no recursion).
//
// Ownership: a PickleDocument owns the bytes it was decoded from; strings
// are views into them. Thread-safety: a document is immutable once decoded
// and may be read from any thread; decode_pickle shares no state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace culprit {

// Why a pickle was refused. `code` is stable (docs/bundle.md, "Flight
// Recorder dumps"); `message` is a sentence with the byte offset.
struct PickleError {
  std::string code;      // "PK001" ...; "" when there is no error
  std::string message;
  uint64_t offset = 0;   // where the decoder stopped
};

class PickleDocument {
 public:
  enum class Kind : uint8_t { None, Bool, Int, Float, String, List, Tuple, Dict, Builder };
  using Id = uint32_t;

  // The value STOP returned.
  Id root() const { return root_; }
  Kind kind(Id v) const { return nodes_[v].kind; }
  int64_t as_int(Id v) const { return static_cast<int64_t>(nodes_[v].bits); }
  bool as_bool(Id v) const { return nodes_[v].bits != 0; }
  double as_float(Id v) const;
  std::string_view as_string(Id v) const;
  // Items of a list or tuple; for a dict, keys and values alternating in
  // the order they were set (a key set twice appears twice: lookup() takes
  // the last, as Python does). Empty for other kinds.
  const std::vector<Id>& items(Id v) const;
  // The value of string key `key` in dict `v`; false when `v` is not a dict
  // or has no such key.
  bool lookup(Id v, std::string_view key, Id& out) const;
  size_t size() const { return nodes_.size(); }

 private:
  friend class PickleDecoder;
  friend bool decode_pickle(std::string bytes, PickleDocument& out, struct PickleError& error);
  struct Node {
    Kind kind = Kind::None;
    uint32_t aux = 0;    // String: length; containers: index into items_
    uint64_t bits = 0;   // Int, Bool: value; Float: IEEE bits; String: offset into bytes_
  };
  std::string bytes_;
  std::vector<Node> nodes_;
  std::vector<std::vector<Id>> items_;
  Id root_ = 0;
};

// Decodes `bytes` (taken over by the document). False with `error` set
// when the stream uses an opcode outside the list above, is truncated or
// malformed, or exceeds the bounds.
bool decode_pickle(std::string bytes, PickleDocument& out, PickleError& error);

// Whether `bytes` starts like a pickle of protocol 2 or later (PROTO n).
bool looks_like_pickle(std::string_view bytes);

}  // namespace culprit
