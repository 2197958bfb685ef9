#include "cli/args.h"

#include <cstdlib>
#include <fstream>

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

bool parse_size(const std::string& s, size_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  std::string suffix(end);
  unsigned long long mult = 1;
  if (suffix == "K" || suffix == "k") mult = 1ULL << 10;
  else if (suffix == "M" || suffix == "m") mult = 1ULL << 20;
  else if (suffix == "G" || suffix == "g") mult = 1ULL << 30;
  else if (!suffix.empty()) return false;
  if (v == 0 || v > (1ULL << 50) / mult) return false;
  out = static_cast<size_t>(v * mult);
  return true;
}

bool read_token_file(const std::string& path, std::string& token, std::string& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err = "cannot read the token file " + path;
    return false;
  }
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
  if (token.empty()) {
    err = "the token file " + path + " is empty";
    return false;
  }
  return true;
}

}  // namespace culprit::cli
