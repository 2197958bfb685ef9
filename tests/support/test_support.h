// Helpers shared by the unit tests: compiling small catalogs, printing IR
// expressions as compact s-expressions (so a test can state a tree shape in
// one string), and temporary directories that clean up after themselves.
//
// Header-only on purpose: tests/CMakeLists.txt globs *_test.cpp files, so a
// helper .cpp would not be built.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "compiler/catalog_loader.h"
#include "compiler/ir.h"
#include "runtime/program.h"

namespace culprit::testing {

// An extractor most tests can build on: three typed fields (int, string,
// bool) so expressions over `e.code`, `e.dev` and `e.fatal` type-check.
inline const char* const kErrExtractor = R"(
extractor Err from app {
  match /ERR (?<code>\d+) dev=(?<dev>\w+)(?<fatal> fatal)?/
  emit app.err { code: int(code), dev: dev, fatal: fatal is not null }
  test { line "ERR 5 dev=a" expect app.err { code: 5, dev: "a", fatal: false } }
  test { line "OK" expect none }
}
)";

// Two extractors the engine tests start from: application errors with a code
// and a device (app.err), and hardware faults from the kernel log (hw.fault).
inline const char* const kErrFaultExtractors = R"attr(
extractor Err from app {
  match /ERR (?<code>\d+) dev=(?<dev>\w+)/
  emit app.err { code: int(code), dev: dev }
  test { line "ERR 5 dev=a" expect app.err { code: 5, dev: "a" } }
  test { line "OK" expect none }
}
extractor Fault from kernel {
  match /FAULT (?<what>\w+)/
  emit hw.fault { what: what }
  test { line "FAULT ecc" expect hw.fault { what: "ecc" } }
  test { line "fine" expect none }
}
)attr";

inline LoadedCatalog compile(const std::string& text, const std::string& name = "t.attr") {
  return compile_sources({{name, text}});
}

// Compiles `text` and fails the test (showing every diagnostic) unless it compiles cleanly.
inline std::shared_ptr<const ir::Catalog> compile_ok(const std::string& text, const std::string& name = "t.attr") {
  LoadedCatalog loaded = compile(text, name);
  INFO(loaded.diagnostics.render());
  REQUIRE(loaded.ok());
  REQUIRE(loaded.diagnostics.all().empty());
  return loaded.catalog;
}

inline std::shared_ptr<const Program> build_program(std::shared_ptr<const ir::Catalog> cat) {
  std::string error;
  auto p = Program::build(std::move(cat), error);
  INFO(error);
  REQUIRE(p != nullptr);
  return p;
}

inline std::shared_ptr<const Program> program_for(const std::string& text) { return build_program(compile_ok(text)); }

inline std::vector<std::string> codes(const LoadedCatalog& loaded) {
  std::vector<std::string> out;
  for (const auto& d : loaded.diagnostics.all()) out.push_back(d.code);
  return out;
}

// "line:col" of a diagnostic, the form people read in the rendered output.
inline std::string at(const Diagnostic& d) { return std::to_string(d.where.line) + ":" + std::to_string(d.where.col); }

// The only diagnostic of a compilation; fails the test if there is not exactly one.
inline Diagnostic only_diagnostic(const LoadedCatalog& loaded) {
  INFO(loaded.diagnostics.render());
  REQUIRE(loaded.diagnostics.all().size() == 1);
  CHECK_FALSE(loaded.ok());
  return loaded.diagnostics.all().front();
}

// ------------------------------------------------------------ IR printing

inline std::string event_builtin_name(int32_t sel) {
  switch (sel) {
    case ir::kEvKind: return "kind";
    case ir::kEvNode: return "node";
    case ir::kEvHost: return "host";
    case ir::kEvSource: return "source";
    case ir::kEvFile: return "file";
    case ir::kEvLine: return "line";
    case ir::kEvOffset: return "offset";
    case ir::kEvTs: return "ts";
    case ir::kEvText: return "text";
    case ir::kEvOwnTs: return "own_ts";
    case ir::kEvPlace: return "place";
    case ir::kEvBoot: return "boot";
  }
  return "?";
}

inline std::string symptom_builtin_name(int32_t sel) {
  switch (sel) {
    case ir::kSyId: return "id";
    case ir::kSyKind: return "kind";
    case ir::kSyNode: return "node";
    case ir::kSyKey: return "key";
    case ir::kSyFirst: return "first";
    case ir::kSyLast: return "last";
    case ir::kSyCount: return "count";
    case ir::kSyPriority: return "priority";
    case ir::kSySummary: return "summary";
    case ir::kSyOwnFirst: return "own_first";
    case ir::kSyPlace: return "place";
    case ir::kSyPlaceLine: return "place_line";
    case ir::kSyPlaceBoot: return "place_boot";
    case ir::kSyFile: return "file";
    case ir::kSyLine: return "line";
    case ir::kSySource: return "source";
  }
  return "?";
}

inline const char* op_name(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::Neg: return "neg";
    case Op::Not: return "not";
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Mod: return "%";
    case Op::Shl: return "<<";
    case Op::Shr: return ">>";
    case Op::BitAnd: return "&";
    case Op::BitXor: return "^";
    case Op::BitOr: return "|";
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
    case Op::Lt: return "<";
    case Op::Le: return "<=";
    case Op::Gt: return ">";
    case Op::Ge: return ">=";
    case Op::And: return "and";
    case Op::Or: return "or";
    case Op::Matches: return "matches";
    case Op::IsNull: return "is-null";
    case Op::IsNotNull: return "is-not-null";
    case Op::In: return "in";
    case Op::NotIn: return "not-in";
    case Op::QueryExists: return "exists";
    case Op::QueryNone: return "none";
    case Op::QueryCount: return "count-query";
    case Op::QueryNodes: return "nodes";
    case Op::QueryMax: return "max";
    case Op::QueryMin: return "min";
    case Op::GroupCount: return "count";
    case Op::GroupDistinct: return "distinct";
    case Op::GroupValues: return "values";
    case Op::GroupFirstTs: return "first_ts";
    case Op::GroupLastTs: return "last_ts";
    case Op::Interpolate: return "interp";
    default: return "?";
  }
}

inline const char* builtin_name(int32_t b) {
  static const char* names[] = {"int",   "hex",      "float",     "duration",  "seconds", "lower",
                                "upper", "trim",     "len",       "contains",  "starts_with",
                                "ends_with", "str",  "coalesce",  "covered",   "coverage",
                                "if",    "time",     "is_node"};
  return b >= 0 && b < 19 ? names[b] : "?";
}

// Compact, unambiguous text of an IR expression: constants as written
// (strings quoted), fields as `e0.code` (slot and field), operators prefix.
inline std::string sexpr(const ir::Expr& e, const ir::Catalog& cat) {
  using ir::Op;
  auto kids = [&](std::string head) {
    std::string s = "(" + head;
    for (const auto& k : e.kids) s += " " + sexpr(k, cat);
    return s + ")";
  };
  switch (e.op) {
    case Op::Const:
      if (e.constant.type == Type::String) return "\"" + e.constant.s + "\"";
      return value_to_text(e.constant);
    case Op::Capture: return "$" + std::to_string(e.a);
    case Op::EventField:
      return "e" + std::to_string(e.a) + "." +
             (e.b < 0 ? event_builtin_name(e.b) : cat.field_names[static_cast<size_t>(e.b)]);
    case Op::SymptomField:
      return "s" + std::to_string(e.a) + "." +
             (e.b < 0 ? symptom_builtin_name(e.b) : cat.field_names[static_cast<size_t>(e.b)]);
    case Op::Terminal: return e.a == 0 ? "terminal.state" : "terminal.exit_code";
    case Op::Outcome: {
      static const char* f[] = {"status", "domain", "sub_domain", "culprits"};
      return std::string("outcome.") + f[e.a];
    }
    case Op::Workload: {
      static const char* f[] = {"nodes", "id", "start", "end", "scheduler", "node_names"};
      return std::string("workload.") + (e.a >= 0 && e.a < 6 ? f[e.a] : "?");
    }
    case Op::Call: return kids(builtin_name(e.a));
    case Op::Matches: {
      std::string s = "(matches " + sexpr(e.kids[0], cat) + " /" + cat.regexes[static_cast<size_t>(e.a)].pattern + "/)";
      return s;
    }
    case Op::QueryExists:
    case Op::QueryNone:
    case Op::QueryCount:
    case Op::QueryNodes:
    case Op::QueryMax:
    case Op::QueryMin: return kids(std::string(op_name(e.op)) + " q" + std::to_string(e.a));
    default: return kids(op_name(e.op));
  }
}

// ---------------------------------------------------------- temporary files

// A fresh directory under the system temp directory, removed (with
// everything in it) when the object goes out of scope.
class TempDir {
 public:
  TempDir() {
    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    const auto base = std::filesystem::temp_directory_path();
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto candidate = base / ("culprit-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
                               std::to_string(rd()));
      if (std::filesystem::create_directory(candidate)) {
        path_ = candidate;
        return;
      }
    }
    FAIL("cannot create a temporary directory");
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `bytes` exactly (binary) to `rel`, creating parent directories.
  std::filesystem::path write(const std::string& rel, const std::string& bytes) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    REQUIRE(out.good());
    return p;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace culprit::testing
