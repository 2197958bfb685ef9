// The blueprint's bounded concurrency: every task and every index runs once,
// never more at a time than asked, and the pool's destructor waits for work
// already submitted.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "blueprint/task_pool.h"

using culprit::blueprint::for_each_at_once;
using culprit::blueprint::TaskPool;

TEST_CASE("for_each_at_once: each index once, at most N at a time") {
  for (size_t at_once : {1u, 3u, 8u}) {
    std::vector<std::atomic<int>> seen(20);
    std::atomic<int> running{0}, peak{0};
    for_each_at_once(seen.size(), at_once, [&](size_t i) {
      int now = ++running;
      for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ++seen[i];
      --running;
    });
    for (auto& s : seen) CHECK(s.load() == 1);
    CHECK(peak.load() >= 1);
    CHECK(peak.load() <= static_cast<int>(at_once));
  }
  int calls = 0;
  for_each_at_once(0, 4, [&](size_t) { ++calls; });
  CHECK(calls == 0);
  for_each_at_once(2, 0, [&](size_t) { ++calls; });  // 0 means one at a time
  CHECK(calls == 2);
}

TEST_CASE("TaskPool: the destructor waits for every submitted task") {
  std::atomic<int> done{0};
  {
    TaskPool pool(2);
    for (int i = 0; i < 10; ++i)
      pool.submit([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++done;
      });
  }
  CHECK(done.load() == 10);
}
