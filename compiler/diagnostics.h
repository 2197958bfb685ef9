// Diagnostics: what the compiler says about a catalog.
//
// Every problem found in an .attr file is a Diagnostic with a stable code
// (E0001..E0699, listed in docs/language.md), a source range and a message,
// and optionally a `help` line (what to write instead) and notes that point
// at related places (where a brace was opened). Codes never change meaning
// once published, so tools and golden files can rely on them. A Diagnostics
// sink collects them in discovery order and renders them sorted by position
// (file load order, then line and column) as
//
//   path:line:col: error[E0201]: unknown event kind 'gpu.xidd'
//       7 |   for e: event gpu.xidd
//         |                ^~~~~~~~
//         = help: did you mean 'gpu.xid'?
//   path:line:col: note: ...            (each note, with its own line and caret)
//
// Thread-safety: a sink is used by one compilation at a time; not synchronized.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/limits.h"

namespace culprit {

// The text of one source file, shared by everything that points into it.
struct SourceFile {
  std::string path;     // as given by the user (relative paths stay relative)
  std::string text;
  std::vector<uint32_t> line_starts;  // byte offset of each line; filled by make_source_file

  std::string_view line_text(uint32_t line) const;  // 1-based line, without the newline
};
std::shared_ptr<const SourceFile> make_source_file(std::string path, std::string text);

// A position range inside one source file; line and col are 1-based, col counts bytes.
struct SourceRange {
  const SourceFile* file = nullptr;
  uint32_t line = 0, col = 0;
  uint32_t end_line = 0, end_col = 0;  // exclusive end; equal to start for a point
};

enum class Severity { Error, Warning, Note };

// A secondary place a diagnostic points at, shown after it.
struct DiagnosticNote {
  SourceRange where;
  std::string message;  // "'{' opened here"
};

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string code;   // "E0201"
  SourceRange where;
  std::string message;
  std::string help;                   // "" or what to do: "did you mean 'gpu.xid'?"
  std::vector<DiagnosticNote> notes;  // related places, in the order given
};

class Diagnostics {
 public:
  static constexpr size_t kMaxErrors = limits::kDiagnostics;
  // Messages longer than this are cut (with "…"), and a long source line is
  // quoted as a window around the caret, so one huge token cannot make a
  // diagnostic huge (limit diagnostic_bytes).
  static constexpr size_t kMaxBytes = limits::kDiagnosticBytes;

  void error(std::string code, const SourceRange& where, std::string message, std::string help = {},
             std::vector<DiagnosticNote> notes = {});
  void warning(std::string code, const SourceRange& where, std::string message, std::string help = {});

  // Keeps a source file alive as long as this sink, so diagnostics that
  // point into it stay printable after the compiler has dropped its tree.
  void keep(std::shared_ptr<const SourceFile> f) { files_.push_back(std::move(f)); }

  bool has_errors() const { return error_count_ > 0; }
  size_t error_count() const { return error_count_; }
  // Every kept diagnostic, in discovery order.
  const std::vector<Diagnostic>& all() const { return items_; }
  // The same, sorted by position: diagnostics without a file first, then by
  // the order files were kept (load order), line and column; stable.
  std::vector<const Diagnostic*> sorted() const;

  // Renders the kept diagnostics sorted by position (at most kMaxErrors
  // errors, then a line saying how many more were suppressed). `color` adds
  // ANSI colours.
  std::string render(bool color = false) const;

 private:
  std::vector<Diagnostic> items_;
  std::vector<std::shared_ptr<const SourceFile>> files_;
  size_t error_count_ = 0;
  size_t suppressed_ = 0;
  // Errors are kept beyond kMaxErrors (up to this many) so that the first
  // kMaxErrors by position can be shown, whatever order they were found in.
  static constexpr size_t kKeptErrors = 10 * kMaxErrors;
};

// Renders one diagnostic; exposed for tests and for the test runner's messages.
std::string render_diagnostic(const Diagnostic& d, bool color = false);

}  // namespace culprit
