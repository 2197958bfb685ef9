#include "base/chunked_vector.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using culprit::ChunkedVector;

namespace {
// Counts live objects, so a test sees every element destroyed exactly once.
struct Tracked {
  static inline int live = 0;
  std::string s;
  explicit Tracked(std::string v) : s(std::move(v)) { ++live; }
  Tracked(const Tracked& o) : s(o.s) { ++live; }
  Tracked(Tracked&& o) noexcept : s(std::move(o.s)) { ++live; }
  ~Tracked() { --live; }
};
}  // namespace

TEST_CASE("ChunkedVector: indexes across the growing chunks and the fixed ones") {
  ChunkedVector<int> v;
  CHECK(v.empty());
  // Past the growing chunks (32 + 64 + ... + 1024 = 2016 elements) into fixed ones.
  const int n = 5000;
  for (int i = 0; i < n; ++i) v.push_back(i * 3);
  REQUIRE(v.size() == static_cast<size_t>(n));
  bool all = true;
  for (int i = 0; i < n; ++i) all = all && v[static_cast<size_t>(i)] == i * 3;
  CHECK(all);
  CHECK(v.front() == 0);
  CHECK(v.back() == (n - 1) * 3);
  int expect = 0;
  for (int x : v) {
    if (x != expect) break;
    expect += 3;
  }
  CHECK(expect == n * 3);
  CHECK(std::is_sorted(v.begin(), v.end()));
  CHECK(v.end() - v.begin() == n);
  CHECK(*(v.begin() + 2016) == 2016 * 3);  // the first element of the first fixed-size chunk
  CHECK(*(v.begin() + 2015) == 2015 * 3);  // the last of the growing ones
}

TEST_CASE("ChunkedVector: elements never move while it grows, nor when it is moved") {
  ChunkedVector<std::string> v;
  v.push_back("first");
  const std::string* first = &v[0];
  std::vector<const std::string*> at;
  for (int i = 0; i < 3000; ++i) at.push_back(&v.emplace_back(std::to_string(i)));
  CHECK(&v[0] == first);
  bool same = true;
  for (int i = 0; i < 3000; ++i) same = same && &v[static_cast<size_t>(i) + 1] == at[static_cast<size_t>(i)];
  CHECK(same);
  ChunkedVector<std::string> moved(std::move(v));
  CHECK(&moved[0] == first);
  CHECK(v.empty());  // NOLINT: moved-from is empty
  ChunkedVector<std::string> assigned;
  assigned = std::move(moved);
  CHECK(&assigned[0] == first);
  CHECK(assigned[3000] == "2999");
}

TEST_CASE("ChunkedVector: truncate, clear, copies and destruction destroy each element once") {
  Tracked::live = 0;
  {
    ChunkedVector<Tracked> v;
    for (int i = 0; i < 2100; ++i) v.emplace_back(std::to_string(i));
    CHECK(Tracked::live == 2100);
    v.truncate(40);
    CHECK(v.size() == 40);
    CHECK(Tracked::live == 40);
    CHECK(v.back().s == "39");
    v.emplace_back("again");  // grows back into freed chunks
    CHECK(v[40].s == "again");
    ChunkedVector<Tracked> copy(v);
    CHECK(Tracked::live == 82);
    CHECK(copy[40].s == "again");
    copy = v;  // copy-assign over a non-empty one
    CHECK(Tracked::live == 82);
    v.clear();
    CHECK(v.empty());
    CHECK(Tracked::live == 41);
    v.emplace_back("after clear");
    CHECK(v.front().s == "after clear");
  }
  CHECK(Tracked::live == 0);
}

TEST_CASE("ChunkedVector: over-aligned elements keep their alignment") {
  struct alignas(64) Wide {
    int x;
  };
  ChunkedVector<Wide> v;
  bool aligned = true;
  for (int i = 0; i < 100; ++i) aligned = aligned && reinterpret_cast<uintptr_t>(&v.emplace_back(Wide{i})) % 64 == 0;
  CHECK(aligned);
  CHECK(v[99].x == 99);
}
