// An on-disk cache of compiled artifacts (JIT object code, serialized
// Hyperscan databases), shared by every Culprit process of one user.
//
// An entry is a file `<dir>/<kind>-<hash of key>.bin` holding a header
// (magic, format version, the SHA-256 of the full key, payload length, the
// SHA-256 of the payload) and the payload. Readers check all of it: an entry
// that is truncated, altered, of another format or written for another key
// (a hash-prefix collision, a file copied from elsewhere) is a miss, never a
// crash; the caller rebuilds and stores it again. Entries are written to a
// temporary file in the same directory and renamed into place, so a reader
// never sees a half-written entry and concurrent writers of one key are
// harmless (both write the same bytes; the last rename wins).
//
// The key must name everything the payload depends on (tool and library
// versions, host CPU, content digests); this module only stores bytes.
//
// No LLVM here: the runtime uses it for Hyperscan databases too. Nothing
// throws; every function is safe to call from any thread.
#pragma once

#include <string>
#include <string_view>

namespace culprit::cache {

// The cache directory: $CULPRIT_CACHE_DIR if set, else
// $XDG_CACHE_HOME/culprit, else $HOME/.cache/culprit; "" when none can be
// determined (no HOME). The directory need not exist yet.
std::string default_directory();

// Reads the entry for (`kind`, `key`) into `payload`. False on a miss; then
// `note` says why when the entry existed but was rejected ("" for a plain miss).
bool load(const std::string& dir, std::string_view kind, std::string_view key, std::string& payload, std::string& note);

// Stores `payload` for (`kind`, `key`), creating `dir` if needed. False (with
// `note`) when it could not; a cache that cannot be written is not an error.
bool store(const std::string& dir, std::string_view kind, std::string_view key, std::string_view payload,
           std::string& note);

// The path of the entry for (`kind`, `key`) (for tests and tools).
std::string entry_path(const std::string& dir, std::string_view kind, std::string_view key);

}  // namespace culprit::cache
