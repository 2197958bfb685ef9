#include "dashboard/html.h"

#include <fmt/format.h>

#include "base/vocabulary.h"
#include "base/timestamp.h"

namespace culprit::dashboard {

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string url_encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
        c == '~')
      out += static_cast<char>(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string query_string(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    out += out.empty() ? "?" : "&";
    out += url_encode(k) + "=" + url_encode(v);
  }
  return out;
}

std::string time_text(std::optional<int64_t> ns) {
  if (!ns) return "—";
  std::string t = format_rfc3339(*ns);  // 2026-03-14T02:03:34.123Z
  if (t.size() < 19) return t;
  return t.substr(0, 10) + " " + t.substr(11, 8);
}

std::string time_element(std::optional<int64_t> ns) {
  if (!ns) return "<span class=\"muted\">—</span>";
  return fmt::format("<time datetime=\"{}\">{}</time>", esc(format_rfc3339(*ns)), esc(time_text(ns)));
}

std::string day_text(int64_t ns) { return format_rfc3339(ns).substr(0, 10); }

std::string span_text(int64_t ns) {
  if (ns < 0) ns = -ns;
  int64_t s = ns / 1000000000;
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{} h {:02} min", s / 3600, (s % 3600) / 60);
  return fmt::format("{} d {} h", s / 86400, (s % 86400) / 3600);
}

std::string count_text(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string status_label(const std::string& status) {
  if (status == vocab::status::kAttributed) return "Attributed";
  if (status == vocab::status::kAmbiguous) return "Ambiguous";
  if (status == vocab::status::kUnattributed) return "Unattributed";
  if (status == vocab::status::kNoFailure) return "No failure";
  return status.empty() ? "—" : status;
}

std::string page(const PageFrame& f, const std::string& main_html) {
  auto nav = [&](const char* key, const char* href, const char* label) {
    return fmt::format("<a href=\"{}\"{}>{}</a>", href, f.nav == key ? " aria-current=\"page\"" : "", label);
  };
  std::string notice = f.notice.empty() ? "" : fmt::format("<p class=\"notice\" role=\"status\">{}</p>", esc(f.notice));
  return fmt::format(
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"color-scheme\" content=\"light dark\">\n"
      "<title>{} · Culprit</title>\n"
      "<link rel=\"stylesheet\" href=\"/assets/dashboard.css\">\n"
      "<link rel=\"icon\" href=\"/assets/favicon.svg\" type=\"image/svg+xml\">\n"
      "<script src=\"/assets/dashboard.js\" defer></script>\n"
      "</head>\n<body>\n"
      "<a class=\"skip\" href=\"#main\">Skip to content</a>\n"
      "<header class=\"top\"><nav aria-label=\"Sections\">"
      "<a class=\"brand\" href=\"/\"><img src=\"/assets/favicon.svg\" alt=\"\" width=\"20\" height=\"20\"> Culprit</a>"
      "{}{}</nav></header>\n"
      "<main id=\"main\" tabindex=\"-1\">\n{}{}</main>\n"
      "<footer><p>Read-only view of <code>{}</code> · <a href=\"/healthz\">health</a> · Culprit {}</p></footer>\n"
      "</body>\n</html>\n",
      esc(f.title), nav("workloads", "/workloads", "Workloads"), nav("fleet", "/fleet", "Fleet"), notice, main_html,
      esc(f.store_url), esc(CULPRIT_VERSION));
}

std::string error_page(const PageFrame& f, int status, const std::string& message) {
  const char* what = status == 400 ? "Bad request" : status == 404 ? "Not found" : status == 405 ? "Method not allowed"
                     : status == 503                             ? "Store unavailable"
                                                                 : "Error";
  return page(f, fmt::format("<h1>{} <span class=\"muted\">({})</span></h1>\n<p class=\"error\">{}</p>\n"
                             "<p><a href=\"/workloads\">Back to the workloads</a></p>\n",
                             what, status, esc(message)));
}

}  // namespace culprit::dashboard
