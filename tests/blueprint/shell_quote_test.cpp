// Shell quoting of the hand-off's commands (blueprint/shell_quote.h): what
// a shell reads back is the argv, whatever the arguments hold.
#include "blueprint/shell_quote.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace culprit::blueprint;

namespace {

// The argv /bin/sh builds from `command`: printf prints each word and a NUL.
std::vector<std::string> sh_words(const std::string& words) {
  std::string cmd = "/bin/sh -c " + shell_quote("printf '%s\\0' " + words);
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  REQUIRE(pclose(p) == 0);
  std::vector<std::string> argv;
  size_t from = 0;
  for (size_t nul = out.find('\0'); nul != std::string::npos; nul = out.find('\0', from)) {
    argv.push_back(out.substr(from, nul - from));
    from = nul + 1;
  }
  return argv;
}

}  // namespace

TEST_CASE("shell_quote: plain words stay as they are, everything else is single-quoted") {
  CHECK(shell_quote("scontrol") == "scontrol");
  CHECK(shell_quote("nodename=node-01") == "nodename=node-01");
  CHECK(shell_quote("/usr/bin/x_1.2:a@b%c+d,e-f") == "/usr/bin/x_1.2:a@b%c+d,e-f");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("reason=culprit: gpu.memory slurm/c1/42@1") == "reason='culprit: gpu.memory slurm/c1/42@1'");
  CHECK(shell_quote("reason=60101$(touch PWNED)") == "reason='60101$(touch PWNED)'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("=x y") == "'=x y'");        // no name before '=': all quoted
  CHECK(shell_quote("1a=x y") == "'1a=x y'");    // not a name
  CHECK(shell_quote("~root") == "'~root'");
  CHECK(shell_command({"scontrol", "update", "state=drain", "reason=a b"}) == "scontrol update state=drain reason='a b'");
}

TEST_CASE("shell_command: /bin/sh reads back exactly the argv") {
  std::vector<std::string> hostile = {
      "60101$(touch PWNED)", "`id`", "\" state=resume \"", "x' ; touch PWNED ; '", "'", "''", "\\", "a\\'b",
      "$HOME", "${IFS}", "*", "?", "[a]", "~", "a;b|c&d", "a\nb", "tab\there", "{a,b}", "#comment", "!", "-n", "",
      "reason=culprit: gpu.memory bundle/c1/60101$(touch PWNED)@b", "x=\"y\"", "=", "a=", "\x01\x7f\xc3\xa9"};
  std::vector<std::string> argv = sh_words(shell_command(hostile));
  CHECK(argv == hostile);
  for (const auto& h : hostile) CHECK(sh_words(shell_quote(h)) == std::vector<std::string>{h});
}
