// Which Host header values the service answers (docs/service.md, "Host
// check"): the defence against DNS rebinding, where a web page makes the
// browser send requests to a name that resolves, after the page loaded, to
// the service's address. The browser then sends that name as Host; the
// service refuses names it does not know (421 Misdirected Request).
//
// Allowed: the loopback names (localhost, any 127.0.0.0/8 address, [::1]),
// the address the service listens on (unless it is a wildcard such as
// 0.0.0.0 or ::), and the names given with --allow-host. A port after the
// name is ignored; names compare case-insensitively; a trailing dot is
// dropped ("localhost." is localhost).
//
// Thread-safety: HostAllowList is immutable after construction; allowed()
// may be called from any thread. Nothing throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace culprit::service {

class HostAllowList {
 public:
  // `listen_host`: the --listen address as bound ("127.0.0.1", "::1",
  // "0.0.0.0", a name). `extra`: the --allow-host names (a name, an IPv4
  // address, or an IPv6 address with or without brackets).
  HostAllowList(std::string_view listen_host, const std::vector<std::string>& extra);

  // Whether a request whose Host header is `host` may be answered. An empty
  // or malformed value (two colons outside brackets, a bad port) is not.
  bool allowed(std::string_view host) const;

 private:
  std::vector<std::string> names_;  // normalised: lower case, IPv6 in brackets, no trailing dot
};

// Whether `host` (an address or name, without port or brackets) is the
// loopback interface: "localhost", 127.0.0.0/8 in dotted-quad form, "::1".
bool is_loopback_host(std::string_view host);

// Whether `host` is a wildcard listen address (every interface): "", "0.0.0.0", "::", "*".
bool is_wildcard_host(std::string_view host);

}  // namespace culprit::service
