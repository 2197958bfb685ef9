#include "cli/text_output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace culprit::cli {

namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

// The terminal's size along one axis: the environment variable (COLUMNS,
// LINES) when it holds a number, else what the terminal on stdout says, else
// 0 (no limit).
size_t terminal_size(const char* env, bool columns) {
  if (const char* c = std::getenv(env); c && *c) {
    char* end = nullptr;
    long n = std::strtol(c, &end, 10);
    if (!*end && n > 0 && n < 100000) return static_cast<size_t>(n);
  }
  struct winsize ws {};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) return columns ? ws.ws_col : ws.ws_row;
  return 0;
}

// --width / --height: 0 (no limit) or at least `least`; absent, the terminal's.
bool size_option(const Args& a, const char* name, size_t least, const char* unit, const char* env, bool columns,
                 size_t& out, std::string& err) {
  auto v = a.last(name);
  if (!v) {
    out = terminal_size(env, columns);
    return true;
  }
  char* end = nullptr;
  long n = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end || n < 0 || n > 100000 || (n > 0 && static_cast<size_t>(n) < least)) {
    err = fmt::format("--{} must be 0 (no limit) or a number of {} from {}", name, unit, least);
    return false;
  }
  out = static_cast<size_t>(n);
  return true;
}

}  // namespace

bool auto_color(int fd) {
  const char* term = std::getenv("TERM");
  bool dumb = term && std::strcmp(term, "dumb") == 0;
  return isatty(fd) && !env_set("NO_COLOR") && !dumb;
}

bool text_options(const Args& a, TextOptions& out, std::string& err) {
  std::string color = a.last("color").value_or("auto");
  if (color != "auto" && color != "always" && color != "never") {
    err = "--color must be auto, always or never";
    return false;
  }
  out.color = color == "always" || (color == "auto" && auto_color(STDOUT_FILENO));
  out.explain = a.has("explain");
  out.cascade = a.has("cascade");
  return size_option(a, "width", 40, "columns", "COLUMNS", true, out.width, err) &&
         size_option(a, "height", 10, "lines", "LINES", false, out.height, err);
}

}  // namespace culprit::cli
