// Slurm hostlists as sacct prints them.
#include "blueprint/hostlist.h"

#include <doctest/doctest.h>

using namespace culprit::blueprint;

namespace {
std::vector<std::string> expand(const std::string& s) {
  std::vector<std::string> out;
  std::string err;
  REQUIRE_MESSAGE(expand_hostlist(s, out, err), err);
  return out;
}
bool bad(const std::string& s) {
  std::vector<std::string> out;
  std::string err;
  return !expand_hostlist(s, out, err) && !err.empty();
}
}  // namespace

TEST_CASE("hostlist: ranges keep their zero padding, lists and plain names mix") {
  CHECK(expand("gpu[001-004,010]") == std::vector<std::string>{"gpu001", "gpu002", "gpu003", "gpu004", "gpu010"});
  CHECK(expand("node1") == std::vector<std::string>{"node1"});
  CHECK(expand("a[8-10],login1,b[2]") == std::vector<std::string>{"a8", "a9", "a10", "login1", "b2"});
  CHECK(expand("n[08-10]") == std::vector<std::string>{"n08", "n09", "n10"});
  CHECK(expand("r[1-2]n[1-2]") == std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"});
  CHECK(expand("dgx-[1-2]-ib") == std::vector<std::string>{"dgx-1-ib", "dgx-2-ib"});
}

TEST_CASE("hostlist: jobs that never ran have no nodes") {
  CHECK(expand("None assigned").empty());
  CHECK(expand("").empty());
  CHECK(expand("(null)").empty());
}

TEST_CASE("hostlist: malformed lists are errors") {
  CHECK(bad("gpu[1-"));
  CHECK(bad("gpu1-2]"));
  CHECK(bad("gpu[4-2]"));
  CHECK(bad("gpu[a-b]"));
  CHECK(bad("gpu[[1]]"));
  CHECK(bad("a,,b"));
  std::vector<std::string> out;
  std::string err;
  CHECK_FALSE(expand_hostlist("n[0-99999999]", out, err, 1000));
  CHECK(err.find("more than 1000") != std::string::npos);
}
