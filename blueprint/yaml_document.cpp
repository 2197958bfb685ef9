// Checking a YAML document before yaml-cpp builds it (yaml_document.h).
#include "blueprint/yaml_document.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <string>

#include "base/limits.h"

namespace culprit::blueprint {

namespace {

SourceRange point(const SourceFile* file, uint32_t line, uint32_t col) {
  SourceRange r;
  r.file = file;
  r.line = r.end_line = line;
  r.col = col;
  r.end_col = col + 1;
  return r;
}

SourceRange at_mark(const SourceFile* file, const YAML::Mark& m) {
  if (m.is_null() || m.line < 0 || m.column < 0) return point(file, 1, 1);
  return point(file, static_cast<uint32_t>(m.line + 1), static_cast<uint32_t>(m.column + 1));
}

// What the event pass stops on; thrown through yaml-cpp's parser, which is
// written for exceptions (it throws its own the same way).
struct Refused {
  YAML::Mark mark;
  std::string message;
};

// Counts nesting and refuses anchors and aliases as the events stream by.
class Checker : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { anchored(m, a); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override {
    throw Refused{m, "aliases ('*name') are not supported here: write the value out"};
  }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a, const std::string&) override { anchored(m, a); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnMapEnd() override { --depth_; }
  void OnAnchor(const YAML::Mark& m, const std::string&) override { anchored(m, 1); }

 private:
  static void anchored(const YAML::Mark& m, YAML::anchor_t a) {
    if (a != YAML::NullAnchor) throw Refused{m, "anchors ('&name') are not supported here: write the values out"};
  }
  void open(const YAML::Mark& m, YAML::anchor_t a) {
    anchored(m, a);
    if (++depth_ > limits::kConfigDepth)
      throw Refused{m, limits::exceeded("config_depth", limits::kConfigDepth, "mappings and lists nested deeper")};
  }
  size_t depth_ = 0;
};

// The byte-order mark and tabs in indentation, which yaml-cpp takes in
// silence or reports as something else ("illegal map value").
bool check_text(const SourceFile& f, const char* code, Diagnostics& diags) {
  const std::string& t = f.text;
  if (t.size() >= 3 && t.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    diags.error(code, point(&f, 1, 1), "the file starts with a byte-order mark (U+FEFF): save it as UTF-8 without one");
    return false;
  }
  bool ok = true;
  uint32_t line = 1;
  for (size_t i = 0; i < t.size();) {
    size_t j = i;
    while (j < t.size() && (t[j] == ' ' || t[j] == '\t')) ++j;
    size_t tab = t.find('\t', i);
    bool blank = j == t.size() || t[j] == '\n' || t[j] == '\r';
    if (tab != std::string::npos && tab < j && !blank) {
      diags.error(code, point(&f, line, static_cast<uint32_t>(tab - i + 1)),
                  "a tab in the indentation: YAML indents with spaces");
      ok = false;
    }
    size_t nl = t.find('\n', j);
    if (nl == std::string::npos) break;
    i = nl + 1;
    ++line;
  }
  return ok;
}

}  // namespace

bool load_yaml_document(const std::shared_ptr<const SourceFile>& file, const char* code, Diagnostics& diags,
                        YAML::Node& root) {
  root = YAML::Node();
  if (!check_text(*file, code, diags)) return false;
  try {
    std::istringstream in(file->text);
    YAML::Parser parser(in);
    Checker checker;
    if (parser.HandleNextDocument(checker)) {
      // A second document: its start is where the parser stands now.
      struct Second : YAML::EventHandler {
        YAML::Mark start;
        bool seen = false;
        void OnDocumentStart(const YAML::Mark& m) override {
          if (!seen) start = m;
          seen = true;
          throw Refused{m, ""};
        }
        void OnDocumentEnd() override {}
        void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
        void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
        void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
        void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
        void OnSequenceEnd() override {}
        void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
        void OnMapEnd() override {}
      } second;
      bool more = false;
      try {
        more = parser.HandleNextDocument(second);
      } catch (const Refused&) {
        more = true;
      }
      if (more) {
        diags.error(code, at_mark(file.get(), second.start),
                    "a second YAML document ('---'): the file must hold exactly one");
        return false;
      }
    }
    root = YAML::Load(file->text);
    return true;
  } catch (const Refused& r) {
    diags.error(code, at_mark(file.get(), r.mark), r.message);
  } catch (const YAML::Exception& e) {
    diags.error(code, at_mark(file.get(), e.mark), "not valid YAML: " + e.msg);
  } catch (const std::exception& e) {
    diags.error(code, point(file.get(), 1, 1), std::string("cannot read the YAML document: ") + e.what());
  }
  root = YAML::Node();
  return false;
}

}  // namespace culprit::blueprint
