// Which Host header values the dashboard answers (DNS rebinding defence).
//
// The dashboard has no login: what keeps a web page the operator happens to
// visit from reading every verdict is that a browser only lets a page read
// answers from the page's own origin. DNS rebinding defeats that: a page at
// http://attacker.example:8081/ makes its name resolve to 127.0.0.1, and the
// browser then sends the dashboard requests that it treats as the
// attacker's own, with `Host: attacker.example:8081`. So a request is
// answered only when its Host names this server: a loopback name or address
// (`localhost`, 127.0.0.0/8, `[::1]`), the --listen address, or a name the
// operator allowed (--allow-host, for a reverse proxy or a host name).
// Others get 421 Misdirected Request (docs/dashboard.md).
//
// The port of the Host value is not compared (a rebinding page uses the
// dashboard's own port anyway); names are compared case-insensitively, with
// one trailing dot ignored. A request without Host is answered only under
// HTTP/1.0 (a browser always sends one; HTTP/1.1 requires one).
//
// Thread-safety: an allow-list is immutable once built; any number of
// threads may call allows() at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace culprit::dashboard {

class HostAllowList {
 public:
  // `listen_host`: the --listen host (brackets of an IPv6 address removed);
  // `names`: the --allow-host values, each checked by normalize_allowed_host.
  HostAllowList(const std::string& listen_host, const std::vector<std::string>& names);

  // True when `host_header` (a Host field value: `name`, `name:port`,
  // `[v6]:port`) names this server.
  bool allows(std::string_view host_header) const;

 private:
  std::vector<std::string> names_;  // normalized, sorted
};

// An --allow-host value: a DNS name (letters, digits, '-', '_', '.'), an
// IPv4 address, or an IPv6 address with or without brackets; no port.
// Returns the form allows() compares (lower case, no trailing dot, no
// brackets), or "" with `error`.
std::string normalize_allowed_host(std::string_view name, std::string& error);

// `localhost` or a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z).
// Anything else, including names that might resolve to loopback, is not.
bool is_loopback_host(std::string_view host);

}  // namespace culprit::dashboard
