// Addressing text for `culprit lsp`: document URIs and positions.
//
// The Language Server Protocol names a document by a `file://` URI and a
// place in it by a 0-based line and a 0-based `character` counted in UTF-16
// code units (LSP 3.17's default position encoding, the only one every
// client supports). The compiler names a place by a path and a 1-based line
// and 1-based column counted in bytes of UTF-8 (compiler/diagnostics.h). The
// functions here convert between the two; a line with `é` or `→` before the
// place has fewer UTF-16 units than bytes, and a character outside the Basic
// Multilingual Plane (an emoji) is two units and four bytes.
//
// Bad input never fails: a position past the end of its line is the line's
// end, a byte column inside a UTF-8 sequence counts as that character's
// start, invalid UTF-8 counts one unit per byte, and a URI that is not a
// `file://` URI gives an empty path. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/diagnostics.h"

namespace culprit::cli::lsp {

struct Position {
  uint32_t line = 0, character = 0;  // 0-based; character in UTF-16 units
};
struct Range {
  Position start, end;  // end exclusive
};

// The byte offset (0-based) in `line` of the UTF-16 `character` (0-based).
uint32_t utf16_to_byte(std::string_view line, uint32_t character);

// The UTF-16 `character` (0-based) of the byte offset (0-based) in `line`.
uint32_t byte_to_utf16(std::string_view line, uint32_t byte);

// Line `line` (0-based) of `text`, without its line break ("\n" or "\r\n");
// empty past the last line.
std::string_view line_of(std::string_view text, uint32_t line);

// A compiler range as an LSP range, converted on the lines of its file (a
// range without a file, or line 0, is the file's start; a point range, end
// equal to start or unset, stays a point).
Range to_lsp(const SourceRange& r);

// The word of a kind or name (letters, digits, '_', '.', and '*' so that a
// kind pattern such as `gpu.*` is one word and names no kind) at byte
// `byte` of `line`, or just before it (a cursor right after a word); its
// start byte in `start`. Empty when there is none.
std::string_view word_at(std::string_view line, uint32_t byte, uint32_t& start);

// "file:///a%20b/c.attr" -> "/a b/c.attr"; "" for any other scheme or an
// authority other than empty or `localhost`.
std::string uri_to_path(std::string_view uri);

// "/a b/c.attr" -> "file:///a%20b/c.attr" (`path` absolute; every byte
// outside the URI's unreserved set and '/' percent-encoded).
std::string path_to_uri(std::string_view path);

}  // namespace culprit::cli::lsp
