#include "cli/text_output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace culprit::cli {

namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

size_t terminal_width() {
  if (const char* c = std::getenv("COLUMNS"); c && *c) {
    char* end = nullptr;
    long n = std::strtol(c, &end, 10);
    if (!*end && n > 0 && n < 100000) return static_cast<size_t>(n);
  }
  struct winsize ws {};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

// The terminal's rows: $LINES, else the terminal's, else 0 (no limit).
size_t terminal_height() {
  if (const char* c = std::getenv("LINES"); c && *c) {
    char* end = nullptr;
    long n = std::strtol(c, &end, 10);
    if (!*end && n > 0 && n < 100000) return static_cast<size_t>(n);
  }
  struct winsize ws {};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
  return 0;
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
  if (auto w = a.last("width")) {
    char* end = nullptr;
    long n = std::strtol(w->c_str(), &end, 10);
    if (w->empty() || *end || n < 0 || n > 100000 || (n > 0 && n < 40)) {
      err = "--width must be 0 (no limit) or a number of columns from 40";
      return false;
    }
    out.width = static_cast<size_t>(n);
  } else {
    out.width = terminal_width();
  }
  if (auto h = a.last("height")) {
    char* end = nullptr;
    long n = std::strtol(h->c_str(), &end, 10);
    if (h->empty() || *end || n < 0 || n > 100000 || (n > 0 && n < 10)) {
      err = "--height must be 0 (no limit) or a number of lines from 10";
      return false;
    }
    out.height = static_cast<size_t>(n);
  } else {
    out.height = terminal_height();
  }
  return true;
}

}  // namespace culprit::cli
