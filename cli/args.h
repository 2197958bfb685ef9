// A small command-line parser: `--name value`, `--name=value`, boolean
// flags, repeated options and positionals. Unknown options are errors, so a
// typo never silently changes what a command does.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace culprit::cli {

struct ArgSpec {
  std::set<std::string> flags;     // boolean: --explain
  std::set<std::string> options;   // take a value: --format json
};

struct Args {
  std::vector<std::string> positionals;
  std::set<std::string> flags;
  std::map<std::string, std::vector<std::string>> options;
  bool has(const std::string& flag) const { return flags.count(flag) > 0; }
  std::optional<std::string> last(const std::string& opt) const;
  std::vector<std::string> all(const std::string& opt) const;
};

// Parses argv[first..]; returns false with `error` set on bad usage.
bool parse_args(int argc, char** argv, int first, const ArgSpec& spec, Args& out, std::string& error);


// A --listen value, HOST:PORT (an IPv6 host in brackets, [::1]:8080, is
// given without them). False with `err` ("--listen must be HOST:PORT",
// "--listen: bad port") otherwise.
bool parse_listen(const std::string& value, std::string& host, int& port, std::string& err);

}  // namespace culprit::cli
