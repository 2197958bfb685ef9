// The wire of `culprit lsp`: JSON-RPC messages framed as in the Language
// Server Protocol's base protocol.
//
//   Content-Length: 52\r\n
//   Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n   (optional)
//   \r\n
//   {"jsonrpc":"2.0","id":1,"method":"initialize",...}
//
// Header lines end with "\r\n" (a bare "\n" is accepted too); the header
// names are case-insensitive; the body is exactly Content-Length bytes.
// Nothing here parses JSON: a body is handed on as bytes.
//
// Bad input is never fatal. A header block without a usable Content-Length,
// a header line longer than kMaxHeaderLine or a block of more than
// kMaxHeaderLines lines is skipped (up to its blank line); a body longer than
// the limit is read and dropped, so the next message is found again; each
// is a Skipped result with the reason, for the server's log. Only the end
// of the input (or a body cut short by it) ends reading.
//
// Thread-safety: a reader or writer is used by one thread at a time.
#pragma once

#include <cstddef>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>

namespace culprit::cli::lsp {

// The largest body accepted: a full-text didChange of the largest rule file
// (1 MiB, limit rule_file_bytes) with JSON escaping fits many times over.
inline constexpr size_t kMaxMessageBytes = 16u << 20;
inline constexpr size_t kMaxHeaderLine = 1024;
inline constexpr size_t kMaxHeaderLines = 32;

struct Incoming {
  enum Status { Message, Skipped, End } status = End;
  std::string body;   // Message: the JSON text
  std::string error;  // Skipped: why, for the log
};

// Reads the next message from `in`.
Incoming read_message(std::istream& in, size_t max_body = kMaxMessageBytes);

// Writes `body` with its header and flushes; false when the stream failed.
bool write_message(std::ostream& out, std::string_view body);

}  // namespace culprit::cli::lsp
