#include "dashboard/host_allow.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace culprit::dashboard {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

// An IPv6 address in its canonical text ("0:0::1" is "::1"), or "".
std::string canonical_ipv6(const std::string& s) {
  in6_addr a{};
  if (inet_pton(AF_INET6, s.c_str(), &a) != 1) return "";
  char text[INET6_ADDRSTRLEN] = "";
  inet_ntop(AF_INET6, &a, text, sizeof text);
  return text;
}

// The name part of a Host value, normalized; false when the value is not
// `name[:port]` or `[v6][:port]`.
bool host_name(std::string_view h, std::string& name) {
  std::string_view rest;
  if (!h.empty() && h.front() == '[') {
    size_t close = h.find(']');
    if (close == std::string_view::npos) return false;
    name = canonical_ipv6(std::string(h.substr(1, close - 1)));
    if (name.empty()) return false;
    rest = h.substr(close + 1);
  } else {
    size_t colon = h.find(':');
    name = lower(h.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : h.substr(colon);
    if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) return false;
    if (name.back() == '.') name.pop_back();
    if (name.empty()) return false;
  }
  if (!rest.empty()) {
    // ":" then at most five digits (RFC 9110 allows the digits to be absent).
    if (rest.front() != ':' || rest.size() > 6) return false;
    for (char c : rest.substr(1))
      if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  std::string h = lower(host);
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (!h.empty() && h.back() == '.') h.pop_back();
  if (h == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    if (std::memcmp(&v6, &in6addr_loopback, sizeof v6) == 0) return true;
    // ::ffff:127.x.y.z, an IPv4 loopback address in IPv6 form.
    static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(v6.s6_addr, kMapped, sizeof kMapped) == 0 && v6.s6_addr[12] == 127;
  }
  return false;
}

std::string normalize_allowed_host(std::string_view name, std::string& error) {
  std::string n = lower(name);
  bool bracketed = n.size() > 2 && n.front() == '[' && n.back() == ']';
  if (bracketed) n = n.substr(1, n.size() - 2);
  if (bracketed || n.find(':') != std::string::npos) {
    if (std::string v6 = canonical_ipv6(n); !v6.empty()) return v6;
    error = "'" + std::string(name) + "' is not a host name or address (give the name without a port)";
    return "";
  }
  if (!n.empty() && n.back() == '.') n.pop_back();
  if (n.empty() || n.size() > 253 || !std::all_of(n.begin(), n.end(), is_name_char)) {
    error = "'" + std::string(name) + "' is not a host name or address (letters, digits, '-', '_' and '.')";
    return "";
  }
  return n;
}

HostAllowList::HostAllowList(const std::string& listen_host, const std::vector<std::string>& names) {
  std::string error;
  if (std::string n = normalize_allowed_host(listen_host, error); !n.empty()) names_.push_back(n);
  for (const auto& name : names)
    if (std::string n = normalize_allowed_host(name, error); !n.empty()) names_.push_back(n);
  std::sort(names_.begin(), names_.end());
  names_.erase(std::unique(names_.begin(), names_.end()), names_.end());
}

bool HostAllowList::allows(std::string_view host_header) const {
  std::string name;
  if (!host_name(host_header, name)) return false;
  if (is_loopback_host(name)) return true;
  return std::binary_search(names_.begin(), names_.end(), name);
}

}  // namespace culprit::dashboard
