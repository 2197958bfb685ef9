#include "service/host_check.h"

#include <cctype>

namespace culprit::service {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A name as compared: lower case, a trailing dot dropped, an IPv6 address
// (it holds a colon) in brackets.
std::string normalise(std::string_view name) {
  std::string n = lower(name);
  if (n.size() > 1 && n.back() == '.') n.pop_back();
  if (n.find(':') != std::string::npos && n.front() != '[') n = "[" + n + "]";
  return n;
}

bool dotted_quad_in_127(std::string_view s) {
  int parts = 0;
  size_t i = 0;
  int first = -1;
  while (parts < 4) {
    size_t start = i;
    int v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - start < 3) v = v * 10 + (s[i++] - '0');
    if (i == start || v > 255) return false;
    if (parts == 0) first = v;
    ++parts;
    if (parts < 4) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
  }
  return i == s.size() && first == 127;
}

// The host part of a Host header value ("name", "name:port", "[v6]",
// "[v6]:port"), normalised; "" when malformed.
std::string host_part(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  if (v.empty()) return {};
  std::string_view name, port;
  if (v.front() == '[') {
    size_t close = v.find(']');
    if (close == std::string_view::npos) return {};
    name = v.substr(0, close + 1);
    std::string_view rest = v.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return {};
      port = rest.substr(1);
      if (port.empty()) return {};
    }
  } else {
    size_t colon = v.find(':');
    if (colon != std::string_view::npos) {
      if (v.find(':', colon + 1) != std::string_view::npos) return {};
      port = v.substr(colon + 1);
      if (port.empty()) return {};
    }
    name = v.substr(0, colon);
  }
  if (port.size() > 5) return {};
  for (char c : port)
    if (!std::isdigit(static_cast<unsigned char>(c))) return {};
  if (name.empty()) return {};
  return normalise(name);
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  std::string n = normalise(host);
  return n == "localhost" || n == "[::1]" || dotted_quad_in_127(n);
}

bool is_wildcard_host(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]" || host == "*";
}

HostAllowList::HostAllowList(std::string_view listen_host, const std::vector<std::string>& extra) {
  if (!is_wildcard_host(listen_host)) names_.push_back(normalise(listen_host));
  for (const auto& e : extra)
    if (!e.empty()) names_.push_back(normalise(e));
}

bool HostAllowList::allowed(std::string_view host) const {
  std::string name = host_part(host);
  if (name.empty()) return false;
  if (is_loopback_host(name)) return true;
  for (const auto& n : names_)
    if (n == name) return true;
  return false;
}

}  // namespace culprit::service
