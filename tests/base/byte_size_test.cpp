#include "base/byte_size.h"

#include <doctest/doctest.h>

using culprit::parse_byte_size;

TEST_CASE("byte size: command-line and YAML spellings give the same bytes") {
  CHECK(parse_byte_size("268435456") == 268435456u);
  CHECK(parse_byte_size("0") == 0u);
  CHECK(parse_byte_size("512B") == 512u);
  CHECK(parse_byte_size("64K") == 65536u);
  CHECK(parse_byte_size("64k") == parse_byte_size("64KiB"));
  CHECK(parse_byte_size("64M") == 64u << 20);
  CHECK(parse_byte_size("64M") == parse_byte_size("64MiB"));
  CHECK(parse_byte_size("1G") == parse_byte_size("1GiB"));
  CHECK(parse_byte_size("10MB") == 10000000u);
  CHECK(parse_byte_size("1GB") == 1000000000u);
  CHECK(parse_byte_size("1024PiB") == std::nullopt);  // unknown unit
}

TEST_CASE("byte size: malformed or absurd text is refused") {
  for (const char* bad : {"", "M", "-1", "+1", "1.5G", " 1", "1 M", "1MiBs", "1mib", "0x10", "1T"})
    CHECK_MESSAGE(parse_byte_size(bad) == std::nullopt, bad);
  CHECK(parse_byte_size("1125899906842624") == 1ULL << 50);
  CHECK(parse_byte_size("1125899906842625") == std::nullopt);
  CHECK(parse_byte_size("1048577G") == std::nullopt);
  CHECK(parse_byte_size("99999999999999999999999") == std::nullopt);
}
