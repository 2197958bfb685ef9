#include "compiler/value.h"

#include <fmt/format.h>

#include "base/timestamp.h"

namespace culprit {

std::string_view type_name(Type t) {
  switch (t) {
    case Type::Null: return "null";
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::String: return "string";
    case Type::Time: return "time";
    case Type::Duration: return "duration";
  }
  return "?";
}

bool values_equal(const Value& a, const Value& b) {
  if (a.type == Type::Int && b.type == Type::Float) return static_cast<double>(a.i) == b.f;
  if (a.type == Type::Float && b.type == Type::Int) return a.f == static_cast<double>(b.i);
  if (a.type != b.type) return false;
  switch (a.type) {
    case Type::Null: return true;
    case Type::Bool: return a.b == b.b;
    case Type::Int:
    case Type::Time:
    case Type::Duration: return a.i == b.i;
    case Type::Float: return a.f == b.f;
    case Type::String: return a.s == b.s;
  }
  return false;
}

bool value_less(const Value& a, const Value& b) {
  if (a.type != b.type) return a.type < b.type;
  switch (a.type) {
    case Type::Null: return false;
    case Type::Bool: return a.b < b.b;
    case Type::Int:
    case Type::Time:
    case Type::Duration: return a.i < b.i;
    case Type::Float: return a.f < b.f;
    case Type::String: return a.s < b.s;
  }
  return false;
}

std::string value_to_text(const Value& v) {
  switch (v.type) {
    case Type::Null: return "null";
    case Type::Bool: return v.b ? "true" : "false";
    case Type::Int: return std::to_string(v.i);
    case Type::Float: return fmt::format("{}", v.f);
    case Type::String: return v.s;
    case Type::Time: return format_rfc3339(v.i);
    case Type::Duration: return format_duration(v.i);
  }
  return "";
}

}  // namespace culprit
