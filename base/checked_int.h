// checked_int: int64 sums and differences that say when they overflow.
//
// Times are int64 nanoseconds. A stamp near the year 2262, a boot time of
// many years or a duration typed by a user can each fit while their sum does
// not, and a signed overflow is undefined behaviour. These are the two
// answers the code base needs:
//   checked_add / checked_sub   the exact result, or nullopt when it leaves
//                               int64 (the caller refuses or skips the value);
//   saturating_add              the result held at INT64_MIN / INT64_MAX (for
//                               bounds that only clip a range).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

namespace culprit {

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

}  // namespace culprit
