// HTML building blocks of the dashboard's pages: escaping, URL encoding,
// times, and the frame every page shares (header, navigation, footer).
//
// Everything that comes from the store or from a request goes through
// esc() (element text and attribute values) or url_encode() (query
// values) before it reaches a page; the pages carry no inline script or
// style, so the Content-Security-Policy can forbid both.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace culprit::dashboard {

// Escapes text for an element or a quoted attribute value (& < > " ').
std::string esc(std::string_view s);
// Percent-encodes a query value (RFC 3986 unreserved characters kept).
std::string url_encode(std::string_view s);
// "?k=v&k2=v2" from pairs (empty values skipped), or "" when none remain.
std::string query_string(const std::vector<std::pair<std::string, std::string>>& params);

// "2026-03-14 02:03:34" (UTC, seconds), "—" when absent.
std::string time_text(std::optional<int64_t> ns);
// A <time datetime="..."> element around time_text().
std::string time_element(std::optional<int64_t> ns);
// "2026-03-14" (UTC).
std::string day_text(int64_t ns);
// "1 h 03 min", "42 s": how long between two instants.
std::string span_text(int64_t ns);
// 1234567 -> "1,234,567".
std::string count_text(int64_t n);
// "attributed" -> "Attributed", "no_failure" -> "No failure".
std::string status_label(const std::string& status);

struct PageFrame {
  std::string title;        // the <title> and the page's <h1> context
  std::string nav;          // "workloads" | "fleet": the current section
  std::string store_url;    // redacted, shown in the footer
  std::string notice;       // a warning shown above the content (e.g. an old schema)
};

// The whole document around `main_html`.
std::string page(const PageFrame& frame, const std::string& main_html);

// An error page: the status in words and a message (never SQL or a stack).
std::string error_page(const PageFrame& frame, int status, const std::string& message);

}  // namespace culprit::dashboard
