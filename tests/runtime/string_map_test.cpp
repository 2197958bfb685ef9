#include "runtime/string_map.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using culprit::StringMap;

namespace {
// Counts its live instances, to see that the map destroys what it made.
struct Tracked {
  static int live;
  int v = 0;
  explicit Tracked(int x = 0) : v(x) { ++live; }
  Tracked(const Tracked& o) : v(o.v) { ++live; }
  ~Tracked() { --live; }
};
int Tracked::live = 0;
}  // namespace

TEST_CASE("string map: finds what was inserted, and nothing else") {
  StringMap<int> m;
  CHECK(m.find("a") == nullptr);
  CHECK(m.empty());
  auto [a, fresh_a] = m.try_emplace("a", 1);
  CHECK(fresh_a);
  CHECK(*a == 1);
  auto [a2, fresh_a2] = m.try_emplace("a", 2);
  CHECK_FALSE(fresh_a2);
  CHECK(a2 == a);
  CHECK(*a2 == 1);  // an existing value is not replaced
  m["b"] = 7;
  CHECK(*m.find("b") == 7);
  CHECK(m.find("ab") == nullptr);
  CHECK(m.find("") == nullptr);
  m[""] = 3;  // the empty key is a key like any other
  CHECK(*m.find("") == 3);
  const std::string with_nul("x\0y", 3);
  m[with_nul] = 9;
  CHECK(*m.find(with_nul) == 9);
  CHECK(m.find("x") == nullptr);
  CHECK(m.size() == 4);
}

TEST_CASE("string map: values keep their addresses while it grows; iteration is in insertion order") {
  StringMap<std::string> m;
  std::vector<std::string*> at;
  const int n = 50000;
  for (int i = 0; i < n; ++i) {
    const std::string key = "symptom.kind@node-" + std::to_string(i) + "#" + std::string(static_cast<size_t>(i % 40), 'k');
    auto [v, fresh] = m.try_emplace(key, std::to_string(i));
    REQUIRE(fresh);
    at.push_back(v);
  }
  CHECK(m.size() == static_cast<size_t>(n));
  for (int i = 0; i < n; i += 997) {
    const std::string key = "symptom.kind@node-" + std::to_string(i) + "#" + std::string(static_cast<size_t>(i % 40), 'k');
    std::string* v = m.find(key);
    REQUIRE(v != nullptr);
    CHECK(v == at[static_cast<size_t>(i)]);
    CHECK(*v == std::to_string(i));
  }
  int next = 0;
  bool in_order = true;
  m.for_each([&](std::string_view key, const std::string& v) {
    in_order = in_order && v == std::to_string(next) && key.starts_with("symptom.kind@node-" + std::to_string(next) + "#");
    ++next;
  });
  CHECK(in_order);
  CHECK(next == n);
}

TEST_CASE("string map: a key longer than a block is kept whole, and small ones still share blocks") {
  StringMap<int> m;
  const std::string big(100000, 'x');
  m["small-1"] = 1;
  m[big] = 2;
  m["small-2"] = 3;
  std::string other = big;
  other.back() = 'y';
  m[other] = 4;
  CHECK(*m.find(big) == 2);
  CHECK(*m.find(other) == 4);
  CHECK(*m.find("small-1") == 1);
  CHECK(*m.find("small-2") == 3);
  CHECK(m.find(std::string(99999, 'x')) == nullptr);
}

TEST_CASE("string map: clear, move and destruction destroy every value once") {
  Tracked::live = 0;
  {
    StringMap<Tracked> m;
    for (int i = 0; i < 1000; ++i) m.try_emplace("k" + std::to_string(i), i);
    CHECK(Tracked::live == 1000);
    m.clear();
    CHECK(Tracked::live == 0);
    CHECK(m.find("k1") == nullptr);
    m.try_emplace("again", 5);  // usable after clear()
    CHECK(m.find("again")->v == 5);
    StringMap<Tracked> moved(std::move(m));
    CHECK(Tracked::live == 1);
    CHECK(moved.find("again")->v == 5);
    CHECK(m.empty());  // NOLINT: a moved-from map is empty and usable
    m.try_emplace("fresh", 6);
    CHECK(Tracked::live == 2);
    moved = std::move(m);  // drops what `moved` held
    CHECK(Tracked::live == 1);
    CHECK(moved.find("fresh")->v == 6);
    CHECK(moved.find("again") == nullptr);
  }
  CHECK(Tracked::live == 0);
}
