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

void Diagnostics::error(std::string code, const SourceRange& where, std::string message) {
  ++error_count_;
  if (error_count_ > kMaxErrors) {
    ++suppressed_;
    return;
  }
  items_.push_back({Severity::Error, std::move(code), where, bounded(std::move(message))});
}

void Diagnostics::warning(std::string code, const SourceRange& where, std::string message) {
  if (items_.size() >= 4 * kMaxErrors) {  // warnings are bounded too: never a flood
    ++suppressed_;
    return;
  }
  items_.push_back({Severity::Warning, std::move(code), where, bounded(std::move(message))});
}

std::string render_diagnostic(const Diagnostic& d, bool color) {
  const char* sev = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "note";
  const char* bold = color ? "\033[1m" : "";
  const char* red = color ? (d.severity == Severity::Error ? "\033[1;31m" : "\033[1;35m") : "";
  const char* reset = color ? "\033[0m" : "";
  std::string out;
  if (d.where.file) {
    out += fmt::format("{}{}:{}:{}:{} {}{}[{}]:{} {}{}{}\n", bold, d.where.file->path, d.where.line, d.where.col,
                       reset, red, sev, d.code, reset, bold, d.message, reset);
    std::string_view src = d.where.file->line_text(d.where.line);
    // A long line is quoted as a window of about kMaxBytes around the caret
    // (cut at character boundaries, marked with "…"); columns shift with it.
    uint32_t col = d.where.col, end_col = d.where.end_col;
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
    if (d.where.line > 0) {
      std::string num = std::to_string(d.where.line);
      std::string pad(num.size(), ' ');
      out += fmt::format(" {} | {}\n", num, src);
      // Columns count bytes, terminals count characters: one pad per
      // character (continuation bytes add none), tabs kept as tabs, so the
      // caret sits under the token however much UTF-8 precedes it.
      auto is_cont = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
      std::string prefix;
      for (uint32_t i = 1; i < col && i - 1 < src.size(); ++i)
        if (!is_cont(src[i - 1])) prefix += src[i - 1] == '\t' ? '\t' : ' ';
      size_t width = 1;
      if (d.where.end_line == d.where.line && end_col > col) {
        size_t end = std::min<size_t>(end_col - 1, src.size());
        width = 0;
        for (size_t i = col - 1; i < end; ++i) width += !is_cont(src[i]);
        width = std::max<size_t>(width, 1);
      }
      out += fmt::format(" {} | {}{}^{}{}\n", pad, prefix, red, std::string(width > 1 ? width - 1 : 0, '~'), reset);
    }
  } else {
    out += fmt::format("{}{}[{}]:{} {}\n", red, sev, d.code, reset, d.message);
  }
  return out;
}

std::string Diagnostics::render(bool color) const {
  std::string out;
  for (const auto& d : items_) out += render_diagnostic(d, color);
  if (suppressed_ > 0)
    out += fmt::format("error: too many errors ({} more not shown)\n", suppressed_);
  return out;
}

}  // namespace culprit
