#include "cli/check_json.h"

#include <nlohmann/json.hpp>

namespace culprit::cli {

namespace {

using nlohmann::ordered_json;

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

void place(ordered_json& j, const SourceRange& r) {
  j["file"] = r.file ? r.file->path : std::string();
  j["line"] = r.line;
  j["col"] = r.col;
}

void add(ordered_json& out, const Diagnostics& ds) {
  for (const auto& d : ds.all()) out.push_back(diagnostic_json(d));
}

}  // namespace

ordered_json diagnostic_json(const Diagnostic& d) {
  ordered_json j;
  j["severity"] = severity_name(d.severity);
  j["code"] = d.code;
  place(j, d.where);
  j["end_line"] = d.where.end_line;
  j["end_col"] = d.where.end_col;
  j["message"] = d.message;
  j["help"] = d.help;
  ordered_json notes = ordered_json::array();
  for (const auto& n : d.notes) {
    ordered_json nj;
    place(nj, n.where);
    nj["message"] = n.message;
    notes.push_back(std::move(nj));
  }
  j["notes"] = std::move(notes);
  return j;
}

std::string check_report_json(const AttributorStart& start, const Diagnostics& run_warnings, const ir::Catalog* catalog) {
  ordered_json j;
  j["schema"] = "culprit.check/v1";
  j["ok"] = catalog != nullptr;
  if (catalog) {
    ordered_json c;
    ordered_json parts = ordered_json::array();
    for (const auto& p : catalog->parts) parts.push_back(p.version.empty() ? p.name : p.name + " " + p.version);
    c["parts"] = std::move(parts);
    c["digest"] = catalog->digest;
    c["files"] = catalog->files.size();
    c["extractors"] = catalog->extractors.size();
    c["rules"] = catalog->rules.size();
    c["scenarios"] = catalog->scenarios.size();
    j["catalog"] = std::move(c);
  } else {
    j["catalog"] = nullptr;
  }
  j["error"] = start.error;
  ordered_json ds = ordered_json::array();
  add(ds, start.diagnostics);
  add(ds, run_warnings);
  j["diagnostics"] = std::move(ds);
  // Invalid UTF-8 in a message (a quoted source line) is replaced, not fatal.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace culprit::cli
