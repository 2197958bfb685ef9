// Which Host values the dashboard answers (dashboard/host_allow.h): the
// DNS-rebinding defence.
#include "dashboard/host_allow.h"

#include <doctest/doctest.h>

#include <string>

using namespace culprit::dashboard;

TEST_CASE("loopback names and addresses are answered, with or without a port") {
  HostAllowList hosts("127.0.0.1", {});
  for (const char* h : {"localhost", "localhost:8081", "LocalHost:8081", "localhost.", "127.0.0.1", "127.0.0.1:8081",
                        "127.1.2.3:80", "[::1]", "[::1]:8081", "[0:0:0:0:0:0:0:1]:8081", "[::ffff:127.0.0.1]:8081",
                        "127.0.0.1:"})
    CHECK_MESSAGE(hosts.allows(h), std::string(h));
}

TEST_CASE("a foreign name is not answered: the DNS rebinding case") {
  HostAllowList hosts("127.0.0.1", {});
  for (const char* h : {"attacker.example", "attacker.example:8081", "localhost.attacker.example", "127.0.0.1.nip.io",
                        "10.0.0.5:8081", "[::2]:8081", "0.0.0.0", "", "localhost:8081:1", "localhost:80x",
                        "[::1", "[::1]x", "[attacker.example]:80", "a b", "localhost:1234567", "128.0.0.1"})
    CHECK_FALSE_MESSAGE(hosts.allows(h), std::string(h));
}

TEST_CASE("the --listen address and --allow-host names are answered too") {
  HostAllowList hosts("10.0.0.5", {"Dash.Example.", "[2001:db8::1]", "proxy.internal"});
  CHECK(hosts.allows("10.0.0.5:8081"));
  CHECK(hosts.allows("dash.example"));
  CHECK(hosts.allows("DASH.example:443"));
  CHECK(hosts.allows("[2001:db8:0::1]:8081"));
  CHECK(hosts.allows("proxy.internal"));
  CHECK_FALSE(hosts.allows("10.0.0.6"));
  CHECK_FALSE(hosts.allows("evil.dash.example"));
  CHECK_FALSE(hosts.allows("attacker.example"));
  HostAllowList any("0.0.0.0", {});
  CHECK(any.allows("0.0.0.0:8081"));  // harmless: no name an attacker controls
  CHECK_FALSE(any.allows("myhost"));
}

TEST_CASE("--allow-host values: names or addresses, never a port") {
  std::string err;
  CHECK(normalize_allowed_host("Dash.Example.", err) == "dash.example");
  CHECK(normalize_allowed_host("[::1]", err) == "::1");
  CHECK(normalize_allowed_host("2001:DB8:0::1", err) == "2001:db8::1");
  CHECK(normalize_allowed_host("10.1.2.3", err) == "10.1.2.3");
  for (const char* bad : {"", "dash.example:8081", "a b", "dash/example", "[dash.example]", ".", "x\n"}) {
    err.clear();
    CHECK_MESSAGE(normalize_allowed_host(bad, err).empty(), std::string(bad));
    CHECK_MESSAGE(!err.empty(), std::string(bad));
  }
}

TEST_CASE("what counts as a loopback listen address (no warning)") {
  for (const char* h : {"127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"}) CHECK_MESSAGE(is_loopback_host(h), std::string(h));
  for (const char* h : {"0.0.0.0", "::", "10.0.0.5", "myhost", "example.com", ""}) CHECK_FALSE_MESSAGE(is_loopback_host(h), std::string(h));
}
