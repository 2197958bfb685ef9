#include "compiler/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/text_util.h"

namespace culprit {

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts.size()) return {};
  size_t begin = line_starts[line - 1];
  size_t end = line < line_starts.size() ? line_starts[line] : text.size();
  while (end > begin && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  return std::string_view(text).substr(begin, end - begin);
}

std::shared_ptr<const SourceFile> make_source_file(std::string path, std::string text) {
  auto f = std::make_shared<SourceFile>();
  f->path = std::move(path);
  f->text = std::move(text);
  f->line_starts.push_back(0);
  for (size_t i = 0; i < f->text.size(); ++i)
    if (f->text[i] == '\n' && i + 1 < f->text.size()) f->line_starts.push_back(static_cast<uint32_t>(i + 1));
  return f;
}

namespace {
std::string bounded(std::string message) {
  return message.size() > Diagnostics::kMaxBytes ? truncate_utf8(message, Diagnostics::kMaxBytes) : message;
}
}  // namespace

void Diagnostics::error(std::string code, const SourceRange& where, std::string message, std::string help,
                        std::vector<DiagnosticNote> notes) {
  ++error_count_;
  if (error_count_ > kKeptErrors) {
    ++suppressed_;
    return;
  }
  for (auto& n : notes) n.message = bounded(std::move(n.message));
  items_.push_back({Severity::Error, std::move(code), where, bounded(std::move(message)), bounded(std::move(help)),
                    std::move(notes)});
}

void Diagnostics::warning(std::string code, const SourceRange& where, std::string message, std::string help) {
  if (items_.size() >= 4 * kMaxErrors) {  // warnings are bounded too: never a flood
    ++suppressed_;
    return;
  }
  items_.push_back({Severity::Warning, std::move(code), where, bounded(std::move(message)), bounded(std::move(help)), {}});
}

std::vector<const Diagnostic*> Diagnostics::sorted() const {
  std::vector<const Diagnostic*> out;
  out.reserve(items_.size());
  for (const auto& d : items_) out.push_back(&d);
  auto file_rank = [&](const SourceFile* f) -> size_t {
    if (!f) return 0;
    for (size_t i = 0; i < files_.size(); ++i)
      if (files_[i].get() == f) return i + 1;
    return files_.size() + 1;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Diagnostic* a, const Diagnostic* b) {
    size_t fa = file_rank(a->where.file), fb = file_rank(b->where.file);
    if (fa != fb) return fa < fb;
    if (fa == files_.size() + 1 && a->where.file != b->where.file)
      return a->where.file->path < b->where.file->path;  // files nobody kept: by path
    if (a->where.line != b->where.line) return a->where.line < b->where.line;
    return a->where.col < b->where.col;
  });
  return out;
}

namespace {

// " 7 | source" and "   | ^~~~" for one range, or "" when it has no line.
std::string source_excerpt(const SourceRange& where, const char* mark, const char* reset) {
  if (!where.file || where.line == 0) return {};
  std::string_view src = where.file->line_text(where.line);
  // A long line is quoted as a window of about kMaxBytes around the caret
  // (cut at character boundaries, marked with "…"); columns shift with it.
  uint32_t col = where.col, end_col = where.end_col;
  std::string window;
  if (src.size() > Diagnostics::kMaxBytes) {
    auto is_cont_at = [&](size_t i) { return i < src.size() && (static_cast<unsigned char>(src[i]) & 0xC0) == 0x80; };
    size_t half = Diagnostics::kMaxBytes / 2;
    size_t from = col > half ? col - 1 - half : 0;
    while (from > 0 && is_cont_at(from)) --from;
    size_t to = std::min(src.size(), from + Diagnostics::kMaxBytes);
    while (to < src.size() && is_cont_at(to)) ++to;
    const std::string ellipsis = "\u2026";
    window = (from > 0 ? ellipsis : "") + std::string(src.substr(from, to - from)) + (to < src.size() ? ellipsis : "");
    // Byte column c (1-based) of the line is byte c - from (+ the mark) of the window.
    size_t lead = from > 0 ? ellipsis.size() : 0;
    auto moved = [&](uint32_t c) {
      size_t v = c > from ? c - from + lead : 1 + lead;
      return static_cast<uint32_t>(std::min(v, window.size() + 1));
    };
    col = moved(col);
    end_col = std::max(moved(end_col), col);
    src = window;
  }
  std::string num = std::to_string(where.line);
  std::string pad(num.size(), ' ');
  std::string out = fmt::format(" {} | {}\n", num, src);
  // Columns count bytes, terminals count characters: one pad per
  // character (continuation bytes add none), tabs kept as tabs, so the
  // caret sits under the token however much UTF-8 precedes it.
  auto is_cont = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  std::string prefix;
  for (uint32_t i = 1; i < col && i - 1 < src.size(); ++i)
    if (!is_cont(src[i - 1])) prefix += src[i - 1] == '\t' ? '\t' : ' ';
  size_t width = 1;
  if (where.end_line == where.line && end_col > col) {
    size_t end = std::min<size_t>(end_col - 1, src.size());
    width = 0;
    for (size_t i = col - 1; i < end; ++i) width += !is_cont(src[i]);
    width = std::max<size_t>(width, 1);
  }
  out += fmt::format(" {} | {}{}^{}{}\n", pad, prefix, mark, std::string(width > 1 ? width - 1 : 0, '~'), reset);
  return out;
}

}  // namespace

std::string render_diagnostic(const Diagnostic& d, bool color) {
  const char* sev = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "note";
  const char* bold = color ? "\033[1m" : "";
  const char* red = color ? (d.severity == Severity::Error ? "\033[1;31m" : "\033[1;35m") : "";
  const char* cyan = color ? "\033[1;36m" : "";
  const char* reset = color ? "\033[0m" : "";
  std::string out;
  if (d.where.file) {
    out += fmt::format("{}{}:{}:{}:{} {}{}[{}]:{} {}{}{}\n", bold, d.where.file->path, d.where.line, d.where.col,
                       reset, red, sev, d.code, reset, bold, d.message, reset);
    out += source_excerpt(d.where, red, reset);
  } else {
    out += fmt::format("{}{}[{}]:{} {}\n", red, sev, d.code, reset, d.message);
  }
  // The help line hangs under the excerpt's bar: "   = help: ...".
  for (const auto& n : d.notes) {
    if (n.where.file)
      out += fmt::format("{}{}:{}:{}:{} {}note:{} {}\n", bold, n.where.file->path, n.where.line, n.where.col, reset, cyan,
                         reset, n.message);
    else
      out += fmt::format("{}note:{} {}\n", cyan, reset, n.message);
    out += source_excerpt(n.where, cyan, reset);
  }
  // The help line comes last, hanging under the primary excerpt's bar.
  std::string bar_pad(d.where.file && d.where.line ? std::to_string(d.where.line).size() : 0, ' ');
  if (!d.help.empty()) out += fmt::format(" {} {}={} help: {}\n", bar_pad, cyan, reset, d.help);
  return out;
}

std::string Diagnostics::render(bool color) const {
  std::string out;
  size_t errors_shown = 0, hidden = suppressed_;
  for (const Diagnostic* d : sorted()) {
    if (d->severity == Severity::Error && errors_shown == kMaxErrors) {
      ++hidden;
      continue;
    }
    if (d->severity == Severity::Error) ++errors_shown;
    out += render_diagnostic(*d, color);
  }
  if (hidden > 0) out += fmt::format("error: too many errors ({} more not shown)\n", hidden);
  return out;
}

}  // namespace culprit
