#include "base/shared_string.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <sstream>
#include <thread>
#include <unordered_set>
#include <vector>

using culprit::SharedString;

TEST_CASE("SharedString: reads, compares and orders as its bytes") {
  SharedString a("logs/node-01/kernel.log");
  std::string same = "logs/node-01/kernel.log";
  CHECK(a.view() == same);
  CHECK(a == same);
  CHECK(same == a);
  CHECK(a == "logs/node-01/kernel.log");
  CHECK(a != "logs/node-01/kernel.lo");
  CHECK(a.size() == same.size());
  CHECK(std::string(a.c_str()) == same);  // NUL-terminated
  CHECK(a.str() == same);
  CHECK(SharedString("a") < SharedString("b"));
  CHECK(SharedString("ab") > SharedString("a"));
  CHECK(SharedString("node-1") < std::string("node-10"));
  CHECK(a + "#1" == same + "#1");
  CHECK(std::string("at ") + a == "at " + same);
  CHECK(fmt::format("[{}]", a) == "[" + same + "]");
  std::ostringstream os;
  os << a;
  CHECK(os.str() == same);
  // Bytes, not text: NULs and invalid UTF-8 are kept as they are.
  const std::string odd("x\0y\xff", 4);
  CHECK(SharedString(odd).view() == odd);
}

TEST_CASE("SharedString: the empty string holds no buffer and equals every other empty one") {
  SharedString e, f(""), g{std::string()};
  CHECK(e.empty());
  CHECK(f.empty());
  CHECK(e == f);
  CHECK(e == g);
  CHECK(e == "");
  CHECK(std::string(e.c_str()).empty());
  SharedString h("x");
  h.clear();
  CHECK(h.empty());
  h = "back";
  CHECK(h == "back");
}

TEST_CASE("SharedString: copies share one buffer; assignment rebinds, never writes through") {
  SharedString a("kernel");
  SharedString b = a;
  CHECK(b.same_buffer(a));
  CHECK(b.data() == a.data());
  b = "app";
  CHECK(a == "kernel");  // the other handle still reads its own bytes
  CHECK(b == "app");
  SharedString c(std::move(b));
  CHECK(c == "app");
  CHECK(b.empty());  // NOLINT: a moved-from handle is empty
  c = c;             // self-assignment keeps the buffer
  CHECK(c == "app");
  SharedString d("kernel");
  CHECK(d == a);  // equal bytes, two buffers
  CHECK_FALSE(d.same_buffer(a));
}

TEST_CASE("SharedString: map and hash keys") {
  std::map<SharedString, int> m{{"b", 2}, {"a", 1}};
  CHECK(m.begin()->first == "a");
  std::unordered_set<SharedString> s{"x", "y", SharedString("x")};
  CHECK(s.size() == 2);
  CHECK(s.count(SharedString("y")) == 1);
}

TEST_CASE("SharedString: handles to one buffer copied and dropped on many threads") {
  // Each thread copies the handle many times and lets the copies go; the
  // buffer must survive them all and be freed once (ASan checks the latter).
  auto shared = std::make_unique<SharedString>(std::string(1000, 'z'));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&shared] {
      for (int i = 0; i < 20000; ++i) {
        SharedString copy = *shared;
        std::vector<SharedString> more(3, copy);
        if (more[2].size() != 1000) std::abort();
      }
    });
  for (auto& t : threads) t.join();
  CHECK(shared->size() == 1000);
  SharedString last = *shared;
  shared.reset();
  CHECK(last == std::string(1000, 'z'));
}
