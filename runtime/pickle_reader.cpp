// The restricted pickle reader (pickle_reader.h). The opcode values and
// their operands are those of CPython's Lib/pickletools.py; which of them
// PyTorch's pickler emits is in torch/csrc/jit/serialization/pickler.cpp.
#include "runtime/pickle_reader.h"

#include <bit>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "base/limits.h"

namespace culprit {
namespace {

// Every opcode of protocols 0 to 5, for naming what was refused.
const char* opcode_name(uint8_t op) {
  switch (op) {
    case '(': return "MARK";
    case '.': return "STOP";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    case 'F': return "FLOAT";
    case 'I': return "INT";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'L': return "LONG";
    case 'M': return "BININT2";
    case 'N': return "NONE";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'X': return "BINUNICODE";
    case 'a': return "APPEND";
    case 'b': return "BUILD";
    case 'c': return "GLOBAL";
    case 'd': return "DICT";
    case '}': return "EMPTY_DICT";
    case 'e': return "APPENDS";
    case 'g': return "GET";
    case 'h': return "BINGET";
    case 'i': return "INST";
    case 'j': return "LONG_BINGET";
    case 'l': return "LIST";
    case ']': return "EMPTY_LIST";
    case 'o': return "OBJ";
    case 'p': return "PUT";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";
    case 't': return "TUPLE";
    case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";
    case 'G': return "BINFLOAT";
    case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return nullptr;
  }
}

// The callables a GLOBAL may name; each returns (part of) its arguments.
enum Builder : uint64_t { kIntList = 1, kDoubleList, kBoolList, kRestoreTypeTag };

}  // namespace

double PickleDocument::as_float(Id v) const { return std::bit_cast<double>(nodes_[v].bits); }

std::string_view PickleDocument::as_string(Id v) const {
  const Node& n = nodes_[v];
  if (n.kind != Kind::String) return {};
  return std::string_view(bytes_).substr(n.bits, n.aux);
}

const std::vector<PickleDocument::Id>& PickleDocument::items(Id v) const {
  static const std::vector<Id> none;
  const Node& n = nodes_[v];
  if (n.kind != Kind::List && n.kind != Kind::Tuple && n.kind != Kind::Dict) return none;
  return items_[n.aux];
}

bool PickleDocument::lookup(Id v, std::string_view key, Id& out) const {
  if (nodes_[v].kind != Kind::Dict) return false;
  const std::vector<Id>& kv = items_[nodes_[v].aux];
  bool found = false;
  for (size_t i = 0; i + 1 < kv.size(); i += 2)
    if (nodes_[kv[i]].kind == Kind::String && as_string(kv[i]) == key) {
      out = kv[i + 1];
      found = true;  // keep looking: the last setting wins
    }
  return found;
}

bool looks_like_pickle(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x80 && static_cast<uint8_t>(bytes[1]) >= 2 &&
         static_cast<uint8_t>(bytes[1]) <= 5;
}

class PickleDecoder {
 public:
  PickleDecoder(PickleDocument& doc, PickleError& err) : doc_(doc), err_(err) {}

  bool run() {
    const std::string& b = doc_.bytes_;
    if (b.size() > limits::kPickleBytes)
      return fail("PK006", fmt::format("the dump is {} bytes, more than the limit of {} (pickle_bytes)", b.size(),
                                       limits::kPickleBytes));
    if (!looks_like_pickle(b))
      return fail("PK008", b.size() >= 2 && static_cast<uint8_t>(b[0]) == 0x80
                               ? fmt::format("pickle protocol {} is not read (2 to 5 are)", static_cast<unsigned>(
                                                                                                 static_cast<uint8_t>(b[1])))
                               : std::string("not a pickle of protocol 2 or later (it does not start with PROTO)"));
    while (pos_ < b.size()) {
      op_at_ = pos_;
      const uint8_t op = static_cast<uint8_t>(b[pos_++]);
      if (!step(op)) return false;
      if (stopped_) return true;
    }
    op_at_ = pos_;
    return fail("PK001", "the stream ends without STOP (a truncated dump)");
  }

 private:
  using Id = PickleDocument::Id;
  using Kind = PickleDocument::Kind;
  static constexpr Id kMark = UINT32_MAX;

  bool fail(const char* code, std::string message) {
    err_.code = code;
    err_.offset = op_at_;
    err_.message = fmt::format("{} at byte {}: {}", code, op_at_, message);
    return false;
  }
  bool truncated() { return fail("PK001", "the stream ends inside an opcode's operand (a truncated dump)"); }

  template <class T>
  bool read_le(T& out, size_t n = sizeof(T)) {
    if (doc_.bytes_.size() - pos_ < n) return truncated();
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(doc_.bytes_[pos_ + i])) << (8 * i);
    pos_ += n;
    out = static_cast<T>(v);
    return true;
  }

  // An unsigned little-endian operand of T's width.
  template <class T>
  bool operand(uint64_t& out) {
    T v = 0;
    if (!read_le(v)) return false;
    out = v;
    return true;
  }

  bool make(Kind k, uint64_t bits, uint32_t aux, Id& out) {
    if (doc_.nodes_.size() >= limits::kPickleValues)
      return fail("PK006", fmt::format("more than {} values (pickle_values)", limits::kPickleValues));
    out = static_cast<Id>(doc_.nodes_.size());
    doc_.nodes_.push_back({k, aux, bits});
    return true;
  }
  bool push_new(Kind k, uint64_t bits = 0, uint32_t aux = 0) {
    Id id;
    if (!make(k, bits, aux, id)) return false;
    stack_.push_back(id);
    return true;
  }
  bool push_container(Kind k) {
    doc_.items_.emplace_back();
    return push_new(k, 0, static_cast<uint32_t>(doc_.items_.size() - 1));
  }
  bool pop(Id& out) {
    if (stack_.empty() || stack_.back() == kMark) return fail("PK004", "an opcode needs a value where the stack has none");
    out = stack_.back();
    stack_.pop_back();
    return true;
  }
  // The values above the topmost MARK, which is removed.
  bool pop_to_mark(std::vector<Id>& out) {
    size_t m = stack_.size();
    while (m > 0 && stack_[m - 1] != kMark) --m;
    if (m == 0) return fail("PK004", "an opcode needs a MARK the stack does not hold");
    out.assign(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m - 1);
    return true;
  }
  bool top_of_kind(Kind k, Id& out) {
    if (stack_.empty() || stack_.back() == kMark || doc_.nodes_[stack_.back()].kind != k)
      return fail("PK004", fmt::format("{} needs a {} below its operands", opcode_name(static_cast<uint8_t>(doc_.bytes_[op_at_])),
                                       k == Kind::Dict ? "dict" : "list"));
    out = stack_.back();
    return true;
  }
  bool add_items(Kind k, const std::vector<Id>& values) {
    Id target;
    if (!top_of_kind(k, target)) return false;
    if (k == Kind::Dict && values.size() % 2 != 0) return fail("PK004", "SETITEMS with a key and no value");
    auto& items = doc_.items_[doc_.nodes_[target].aux];
    items.insert(items.end(), values.begin(), values.end());
    return true;
  }
  bool make_tuple(const std::vector<Id>& values) {
    if (!push_container(Kind::Tuple)) return false;
    doc_.items_.back() = values;
    return true;
  }
  bool string_op(uint64_t len) {
    if (doc_.bytes_.size() - pos_ < len) return truncated();
    if (len > UINT32_MAX) return fail("PK007", "a string longer than 4 GiB");
    const uint64_t at = pos_;
    pos_ += len;
    return push_new(Kind::String, at, static_cast<uint32_t>(len));
  }
  bool memo_put(uint64_t index) {
    if (stack_.empty() || stack_.back() == kMark) return fail("PK004", "a memo store with no value on the stack");
    if (memo_.size() >= limits::kPickleValues && !memo_.count(index))
      return fail("PK006", fmt::format("more than {} memo entries (pickle_values)", limits::kPickleValues));
    memo_[index] = stack_.back();
    return true;
  }
  bool memo_get(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) return fail("PK005", fmt::format("memo entry {} is read before it is stored", index));
    stack_.push_back(it->second);
    return true;
  }
  bool global() {
    // GLOBAL's operand: "module\nname\n".
    const std::string& b = doc_.bytes_;
    size_t nl1 = b.find('\n', pos_);
    size_t nl2 = nl1 == std::string::npos ? std::string::npos : b.find('\n', nl1 + 1);
    if (nl2 == std::string::npos || nl2 - pos_ > 256) return truncated();
    std::string_view module(b.data() + pos_, nl1 - pos_), name(b.data() + nl1 + 1, nl2 - nl1 - 1);
    pos_ = nl2 + 1;
    uint64_t which = 0;
    if (module == "torch.jit._pickle") {
      if (name == "build_intlist") which = kIntList;
      else if (name == "build_doublelist") which = kDoubleList;
      else if (name == "build_boollist") which = kBoolList;
      else if (name == "restore_type_tag") which = kRestoreTypeTag;
    }
    if (!which)
      return fail("PK003", fmt::format("GLOBAL {}.{} is not allowed: only torch.jit._pickle's list builders and "
                                       "restore_type_tag are read, and nothing is ever called",
                                       std::string(module.substr(0, 64)), std::string(name.substr(0, 64))));
    return push_new(Kind::Builder, which);
  }
  bool reduce() {
    Id args, callable;
    if (!pop(args) || !pop(callable)) return false;
    if (doc_.nodes_[callable].kind != Kind::Builder) return fail("PK003", "REDUCE of something that is not an allowed GLOBAL");
    if (doc_.nodes_[args].kind != Kind::Tuple) return fail("PK004", "REDUCE whose arguments are not a tuple");
    const auto& a = doc_.items_[doc_.nodes_[args].aux];
    if (doc_.nodes_[callable].bits == kRestoreTypeTag) {
      if (a.size() != 2) return fail("PK004", "restore_type_tag takes 2 arguments");
      stack_.push_back(a[0]);
      return true;
    }
    if (a.size() != 1 || doc_.nodes_[a[0]].kind != Kind::List)
      return fail("PK004", "a list builder whose argument is not one list");
    stack_.push_back(a[0]);
    return true;
  }

  bool step(uint8_t op) {
    std::vector<Id>& tmp = scratch_;
    uint64_t u = 0;
    switch (op) {
      case 0x80: {  // PROTO
        uint8_t v = 0;
        if (!read_le(v)) return false;
        if (v < 2 || v > 5) return fail("PK008", fmt::format("pickle protocol {} is not read (2 to 5 are)", v));
        return true;
      }
      case 0x95: {  // FRAME: a length prefix; the opcodes inside are read as they come
        uint64_t n = 0;
        return read_le(n);
      }
      case '.':  // STOP
        if (stack_.size() != 1 || stack_.back() == kMark)
          return fail("PK004", fmt::format("STOP with {} values on the stack, not 1", stack_.size()));
        doc_.root_ = stack_.back();
        stopped_ = true;
        return true;
      case '(':
        if (stack_.size() >= limits::kPickleValues) return fail("PK006", "too many MARKs (pickle_values)");
        stack_.push_back(kMark);
        return true;
      case '}': return push_container(Kind::Dict);
      case ']': return push_container(Kind::List);
      case ')': return push_container(Kind::Tuple);
      case 's': {  // SETITEM
        Id k, v;
        if (!pop(v) || !pop(k)) return false;
        tmp = {k, v};
        return add_items(Kind::Dict, tmp);
      }
      case 'u': return pop_to_mark(tmp) && add_items(Kind::Dict, tmp);
      case 'a': {  // APPEND
        Id v;
        if (!pop(v)) return false;
        tmp = {v};
        return add_items(Kind::List, tmp);
      }
      case 'e': return pop_to_mark(tmp) && add_items(Kind::List, tmp);
      case 't': return pop_to_mark(tmp) && make_tuple(tmp);
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        const size_t n = op - 0x84u;
        tmp.assign(n, 0);
        for (size_t i = n; i-- > 0;)
          if (!pop(tmp[i])) return false;
        return make_tuple(tmp);
      }
      case 'J': {
        int32_t v = 0;
        return read_le(v) && push_new(Kind::Int, static_cast<uint64_t>(static_cast<int64_t>(v)));
      }
      case 'K': return operand<uint8_t>(u) && push_new(Kind::Int, u);
      case 'M': return operand<uint16_t>(u) && push_new(Kind::Int, u);
      case 0x8a: {  // LONG1: n bytes of two's complement, little-endian
        uint8_t n = 0;
        if (!read_le(n)) return false;
        if (n > 8) return fail("PK007", fmt::format("an integer of {} bytes (at most 8 are read)", n));
        uint64_t v = 0;
        if (n > 0 && !read_le(v, n)) return false;
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
        return push_new(Kind::Int, v);
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        if (doc_.bytes_.size() - pos_ < 8) return truncated();
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(doc_.bytes_[pos_ + i]);
        pos_ += 8;
        return push_new(Kind::Float, v);
      }
      case 'X': return operand<uint32_t>(u) && string_op(u);
      case 0x8c: return operand<uint8_t>(u) && string_op(u);
      case 0x8d: return operand<uint64_t>(u) && string_op(u);
      case 'N': return push_new(Kind::None);
      case 0x88: return push_new(Kind::Bool, 1);
      case 0x89: return push_new(Kind::Bool, 0);
      case 'q': return operand<uint8_t>(u) && memo_put(u);
      case 'r': return operand<uint32_t>(u) && memo_put(u);
      case 0x94: return memo_put(memo_.size());
      case 'h': return operand<uint8_t>(u) && memo_get(u);
      case 'j': return operand<uint32_t>(u) && memo_get(u);
      case 'c': return global();
      case 'R': return reduce();
      default: {
        const char* name = opcode_name(op);
        return fail("PK002", name ? fmt::format("opcode {} (0x{:02x}) is refused: a Flight Recorder dump does not use it", name, op)
                                  : fmt::format("byte 0x{:02x} is not a pickle opcode", op));
      }
    }
  }

  PickleDocument& doc_;
  PickleError& err_;
  std::vector<Id> stack_, scratch_;
  std::unordered_map<uint64_t, Id> memo_;
  size_t pos_ = 2;      // after PROTO n, checked by looks_like_pickle
  size_t op_at_ = 0;
  bool stopped_ = false;
};

bool decode_pickle(std::string bytes, PickleDocument& out, PickleError& error) {
  out = PickleDocument{};
  out.bytes_ = std::move(bytes);
  error = PickleError{};
  PickleDecoder d(out, error);
  if (d.run()) return true;
  out = PickleDocument{};
  return false;
}

}  // namespace culprit
