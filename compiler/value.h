// Values of the .attr language: what expressions compute and events carry.
//
// A Value is a small tagged union. Strings are owned (std::string) so a
// Value can outlive the line it was captured from. Times are nanoseconds
// since the Unix epoch (UTC); durations are nanoseconds. `null` is a value of
// its own type and propagates through arithmetic (see docs/language.md §6).
// Values are plain data: copy freely, no sharing, no synchronization needed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace culprit {

enum class Type : uint8_t { Null, Bool, Int, Float, String, Time, Duration };

std::string_view type_name(Type t);

struct Value {
  Type type = Type::Null;
  bool b = false;
  int64_t i = 0;     // Int, Time, Duration
  double f = 0;      // Float
  std::string s;     // String

  static Value null() { return {}; }
  static Value boolean(bool v) { Value x; x.type = Type::Bool; x.b = v; return x; }
  static Value integer(int64_t v) { Value x; x.type = Type::Int; x.i = v; return x; }
  static Value real(double v) { Value x; x.type = Type::Float; x.f = v; return x; }
  static Value string(std::string v) { Value x; x.type = Type::String; x.s = std::move(v); return x; }
  static Value time(int64_t ns) { Value x; x.type = Type::Time; x.i = ns; return x; }
  static Value duration(int64_t ns) { Value x; x.type = Type::Duration; x.i = ns; return x; }

  bool is_null() const { return type == Type::Null; }
  // Truth for `where`, `and`, `or`: only a true bool is true.
  bool truthy() const { return type == Type::Bool && b; }
};

// Structural equality (same type and payload; null == null). Int and Float
// compare numerically.
bool values_equal(const Value& a, const Value& b);
// Total order used for sorting and group keys: by type, then payload.
bool value_less(const Value& a, const Value& b);
// Text form used by str(), interpolation, values() and the verdict: ints in
// decimal, times RFC 3339, durations compact ("30s"), null as "null".
std::string value_to_text(const Value& v);

}  // namespace culprit
