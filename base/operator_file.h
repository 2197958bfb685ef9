// Files an operator names: configurations, policies, secrets and tokens.
//
// Such a path comes from a command line or a configuration, and the file
// behind it may be anything: a FIFO with no writer (which would hang the
// start), a device, a directory, a multi-gigabyte mistake. Every reader of
// such a file goes through read_regular_file, and every secret (bearer
// tokens, passwords) through read_secret, so a token is read the same way by
// `culprit serve --token-file`, the blueprint's connectors and the store.
//
//   std::string token, err;
//   if (!read_secret(cfg.token_file, cfg.token_env, token, err)) fail(err);
//
// Errors are returned as messages that name the file and what it was for
// ("cannot read the configuration x.yaml: it is a FIFO, not a regular
// file"). Thread-safety: as the file system; no shared state. No exceptions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace culprit {

// Reads `path` whole into `text`. Only a regular file is read: it is opened
// without blocking (O_NONBLOCK) and checked with fstat; a FIFO, a device, a
// directory or a socket is refused, as is a file over `max_bytes` (limit
// `limit_name` of base/limits.h, named in the message). `what` names the file
// in messages ("the configuration").
bool read_regular_file(const std::string& path, size_t max_bytes, const char* limit_name, const std::string& what,
                       std::string& text, std::string& err);

// A secret from a file or an environment variable (the file first, when
// both are named). The secret is the file's first line without trailing
// blanks or CR (first_line_secret), read with read_regular_file at most
// limits::kSecretFileBytes, or the variable's value. False with `err` when
// neither gives a non-empty value or the file cannot be read.
bool read_secret(const std::string& file, const std::string& env, std::string& secret, std::string& err);

// The first line of `text` without its trailing blanks, tabs and CR: the
// secret a token or password file holds ("s3cret\n" -> "s3cret").
std::string first_line_secret(std::string_view text);

}  // namespace culprit
