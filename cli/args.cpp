#include "cli/args.h"

#include <cstdlib>

#include "base/suggest.h"

namespace culprit::cli {

std::optional<std::string> Args::last(const std::string& opt) const {
  auto it = options.find(opt);
  if (it == options.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::all(const std::string& opt) const {
  auto it = options.find(opt);
  return it == options.end() ? std::vector<std::string>{} : it->second;
}

bool parse_args(int argc, char** argv, int first, const ArgSpec& spec, Args& out, std::string& error) {
  bool only_positionals = false;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (only_positionals || a.size() < 2 || a[0] != '-' || a == "-") {
      out.positionals.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positionals = true;
      continue;
    }
    if (a == "-h") a = "--help";
    if (a == "-v" && spec.flags.count("verbose")) a = "--verbose";
    if (a.rfind("--", 0) != 0) {
      error = "unknown option '" + a + "'";
      return false;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (spec.flags.count(name)) {
      if (has_value) {
        error = "option '--" + name + "' takes no value";
        return false;
      }
      out.flags.insert(name);
    } else if (spec.options.count(name)) {
      if (!has_value) {
        if (i + 1 >= argc) {
          error = "option '--" + name + "' needs a value";
          return false;
        }
        value = argv[++i];
      }
      out.options[name].push_back(value);
    } else {
      error = "unknown option '--" + name + "'";
      std::vector<std::string> known(spec.flags.begin(), spec.flags.end());
      known.insert(known.end(), spec.options.begin(), spec.options.end());
      if (auto m = closest_match(name, known)) error += " (did you mean '--" + *m + "'?)";
      return false;
    }
  }
  return true;
}

bool parse_listen(const std::string& value, std::string& host, int& port, std::string& err) {
  size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    err = "--listen must be HOST:PORT";
    return false;
  }
  host = value.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  long p = std::strtol(value.c_str() + colon + 1, &end, 10);
  if (*end || p < 0 || p > 65535 || colon + 1 == value.size()) {
    err = "--listen: bad port";
    return false;
  }
  port = static_cast<int>(p);
  return true;
}

}  // namespace culprit::cli
