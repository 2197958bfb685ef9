// Byte sizes as people write them, on the command line and in YAML alike.
//
//   parse_byte_size("268435456")  -> 268435456
//   parse_byte_size("64M")        -> 67108864   (K, M, G: binary, as in ulimit and sort -S)
//   parse_byte_size("64MiB")      -> 67108864
//   parse_byte_size("10MB")       -> 10000000   (KB, MB, GB: decimal)
//
// Units: none or B (bytes); K/k/KiB, M/m/MiB, G/g/GiB (powers of 1024); KB,
// MB, GB (powers of 1000). No spaces, no fractions, no sign. Range checks
// (zero allowed or not, a maximum) belong to the caller, who knows what the
// size is for; this only refuses text that is malformed or whose value
// exceeds 2^50 bytes (1 PiB), which no limit of Culprit comes near.
//
// Thread-safety: pure function. No exceptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace culprit {

std::optional<uint64_t> parse_byte_size(std::string_view text) noexcept;

}  // namespace culprit
