// cli/lsp_transport.h and cli/lsp_text.h: the framing `culprit lsp` reads
// and writes, and the conversion between LSP positions (0-based, UTF-16
// code units) and the compiler's (1-based, UTF-8 bytes). The server as a
// whole is tested through the binary by tests/cli/check_lsp.py.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "cli/lsp_text.h"
#include "cli/lsp_transport.h"

using namespace culprit::cli::lsp;

namespace {

std::string framed(const std::string& body) { return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body; }

}  // namespace

TEST_CASE("lsp framing: messages back to back, header names in any case, extra headers, bare newlines") {
  std::istringstream in(framed("{\"a\":1}") + "content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}" +
                        "Content-Length:3\n\n[1]");
  auto m = read_message(in);
  CHECK(m.status == Incoming::Message);
  CHECK(m.body == "{\"a\":1}");
  m = read_message(in);
  CHECK(m.status == Incoming::Message);
  CHECK(m.body == "{}");
  m = read_message(in);
  CHECK(m.status == Incoming::Message);
  CHECK(m.body == "[1]");
  CHECK(read_message(in).status == Incoming::End);
}

TEST_CASE("lsp framing: a bad header block is skipped and the next message is read") {
  std::istringstream in("Content-Type: x\r\n\r\n" + framed("{\"n\":1}") + "Content-Length: ten\r\n\r\n" + framed("{\"n\":2}") +
                        "garbage without colon\r\n\r\n" + framed("{\"n\":3}") + "Content-Length: " + std::string(2000, '9') +
                        "\r\n\r\n" + framed("{\"n\":4}"));
  auto m = read_message(in);
  CHECK(m.status == Incoming::Skipped);
  CHECK(m.error.find("without Content-Length") != std::string::npos);
  CHECK(read_message(in).body == "{\"n\":1}");
  m = read_message(in);
  CHECK(m.status == Incoming::Skipped);
  CHECK(m.error.find("not a number") != std::string::npos);
  CHECK(read_message(in).body == "{\"n\":2}");
  CHECK(read_message(in).status == Incoming::Skipped);
  CHECK(read_message(in).body == "{\"n\":3}");
  m = read_message(in);
  CHECK(m.status == Incoming::Skipped);
  CHECK(m.error.find("header line longer") != std::string::npos);
  CHECK(read_message(in).body == "{\"n\":4}");
}

TEST_CASE("lsp framing: a body over the limit is read past and dropped") {
  std::istringstream in(framed(std::string(100, 'x')) + framed("{}"));
  auto m = read_message(in, 64);
  CHECK(m.status == Incoming::Skipped);
  CHECK(m.error.find("100 bytes") != std::string::npos);
  m = read_message(in, 64);
  CHECK(m.status == Incoming::Message);
  CHECK(m.body == "{}");
}

TEST_CASE("lsp framing: the end of the input, also inside a header or a body") {
  std::istringstream empty("");
  CHECK(read_message(empty).status == Incoming::End);
  std::istringstream header("Content-Length: 5\r\n");
  CHECK(read_message(header).status == Incoming::End);
  std::istringstream body("Content-Length: 50\r\n\r\n{\"short\"}");
  auto m = read_message(body);
  CHECK(m.status == Incoming::End);
  CHECK(m.body.empty());
  std::istringstream huge("Content-Length: 99999999999999999999999\r\n\r\n{}");
  CHECK(read_message(huge).status == Incoming::Skipped);  // does not fit size_t: not a number
}

TEST_CASE("lsp framing: what is written reads back") {
  std::ostringstream out;
  CHECK(write_message(out, "{\"é\":1}"));
  CHECK(out.str() == "Content-Length: 8\r\n\r\n{\"é\":1}");  // bytes, not characters
  std::istringstream in(out.str());
  CHECK(read_message(in).body == "{\"é\":1}");
}

TEST_CASE("lsp positions: UTF-16 units and UTF-8 bytes") {
  // 'a' 1 byte 1 unit, 'é' 2 bytes 1 unit, '→' 3 bytes 1 unit, '😀' 4 bytes 2 units.
  const std::string line = "aé→😀b";
  CHECK(line.size() == 11);
  const uint32_t bytes[] = {0, 1, 3, 6, 10, 11};
  const uint32_t units[] = {0, 1, 2, 3, 5, 6};
  for (int i = 0; i < 6; ++i) {
    CHECK(utf16_to_byte(line, units[i]) == bytes[i]);
    CHECK(byte_to_utf16(line, bytes[i]) == units[i]);
  }
  CHECK(utf16_to_byte(line, 4) == 6);    // between the emoji's two halves: its start
  CHECK(byte_to_utf16(line, 2) == 1);    // inside 'é': that character
  CHECK(utf16_to_byte(line, 99) == 11);  // past the end: the end
  CHECK(byte_to_utf16(line, 99) == 6);
  CHECK(utf16_to_byte("ascii", 3) == 3);
  // Invalid UTF-8: each stray byte is one unit.
  const std::string bad = "\x80\xff" "x";
  CHECK(utf16_to_byte(bad, 2) == 2);
  CHECK(byte_to_utf16(bad, 2) == 2);
  // A lead byte whose sequence the line cuts short: one unit.
  CHECK(byte_to_utf16("a\xe2", 5) == 2);
  CHECK(utf16_to_byte("a\xe2" "b", 2) == 2);
}

TEST_CASE("lsp positions: a compiler range on a line with non-ASCII text") {
  auto f = culprit::make_source_file("/r/x.attr", "# é\n  emit gpu.xid { message: \"→\" }\r\nrule → X\n");
  culprit::SourceRange r{f.get(), 2, 8, 2, 15};  // gpu.xid
  Range lr = to_lsp(r);
  CHECK(lr.start.line == 1);
  CHECK(lr.start.character == 7);
  CHECK(lr.end.character == 14);
  culprit::SourceRange after{f.get(), 3, 10, 3, 11};  // 'X' after "rule → " (7 bytes + 2 for the arrow)
  lr = to_lsp(after);
  CHECK(lr.start.line == 2);
  CHECK(lr.start.character == 7);
  CHECK(lr.end.character == 8);
  culprit::SourceRange point{f.get(), 1, 3, 0, 0};
  lr = to_lsp(point);
  CHECK(lr.end.line == 0);
  CHECK(lr.end.character == lr.start.character);
  CHECK(to_lsp(culprit::SourceRange{}).start.line == 0);
}

TEST_CASE("lsp text: lines and words") {
  const std::string text = "a\r\nfor e: event gpu.xid\nemit x.*";
  CHECK(line_of(text, 0) == "a");
  CHECK(line_of(text, 1) == "for e: event gpu.xid");
  CHECK(line_of(text, 5).empty());
  uint32_t start = 0;
  std::string_view l = line_of(text, 1);
  CHECK(word_at(l, 15, start) == "gpu.xid");
  CHECK(start == 13);
  CHECK(word_at(l, 20, start) == "gpu.xid");  // just after the word
  CHECK(word_at(l, 5, start) == "e");         // after 'e', before ':'
  CHECK(word_at(l, 6, start).empty());        // between ':' and ' '
  CHECK(word_at(line_of(text, 2), 6, start) == "x.*");
}

TEST_CASE("lsp text: file URIs") {
  CHECK(uri_to_path("file:///work/rules/a%20b.attr") == "/work/rules/a b.attr");
  CHECK(uri_to_path("FILE://localhost/x/%C3%A9.attr") == "/x/é.attr");
  CHECK(uri_to_path("file:///x.attr#L3") == "/x.attr");
  CHECK(uri_to_path("untitled:Untitled-1").empty());
  CHECK(uri_to_path("file://otherhost/x").empty());
  CHECK(uri_to_path("file:///a%00b").empty());
  CHECK(uri_to_path("file:///50%").empty() == false);  // a lone '%' stays itself
  CHECK(path_to_uri("/work/a b/é.attr") == "file:///work/a%20b/%C3%A9.attr");
  CHECK(uri_to_path(path_to_uri("/tmp/odd #?%name.attr")) == "/tmp/odd #?%name.attr");
}
