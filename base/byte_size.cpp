#include "base/byte_size.h"

#include <array>
#include <utility>

namespace culprit {

std::optional<uint64_t> parse_byte_size(std::string_view s) noexcept {
  // Both spellings are accepted because both reach us: "64M" from command
  // lines (serve's --max-body), "256MiB" from YAML configs written after
  // Kubernetes' resource quantities.
  static constexpr std::array<std::pair<std::string_view, uint64_t>, 14> kUnits = {{
      {"", 1},          {"B", 1},         {"K", 1ULL << 10}, {"k", 1ULL << 10}, {"KiB", 1ULL << 10},
      {"M", 1ULL << 20}, {"m", 1ULL << 20}, {"MiB", 1ULL << 20}, {"G", 1ULL << 30}, {"g", 1ULL << 30},
      {"GiB", 1ULL << 30}, {"KB", 1000},   {"MB", 1000000},   {"GB", 1000000000},
  }};
  constexpr uint64_t kMax = 1ULL << 50;
  size_t i = 0;
  uint64_t n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    n = n * 10 + static_cast<uint64_t>(s[i] - '0');
    if (n > kMax) return std::nullopt;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string_view unit = s.substr(i);
  for (const auto& [name, mult] : kUnits)
    if (name == unit) {
      if (n > kMax / mult) return std::nullopt;
      return n * mult;
    }
  return std::nullopt;
}

}  // namespace culprit
