#include "cli/lsp_index.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/lsp_text.h"

namespace culprit::cli::lsp {

namespace {

bool reads(const ir::Query& q, bool symptom, int32_t kind) {
  return q.symptom == symptom && std::binary_search(q.kinds.begin(), q.kinds.end(), kind);
}

// Every query of a rule: its `for`, those inside expressions and those of
// its demote/scrub actions.
template <typename F>
void each_query(const ir::Rule& r, F&& f) {
  if (r.for_query) f(*r.for_query);
  for (const auto& q : r.queries) f(q);
  for (const auto& a : r.actions)
    if (a.query) f(*a.query);
}

// "[gpu_xid.attr:13](file:///.../gpu_xid.attr#L13)": the file's name keeps
// a hover short; the link opens the place in editors that follow links.
std::string link(const SourceRange& r) {
  if (!r.file) return "?";
  const std::string& path = r.file->path;
  size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return fmt::format("[{}:{}]({}#L{})", name, r.line, path_to_uri(path), r.line);
}

size_t longest_backtick_run(std::string_view s) {
  size_t longest = 0, run = 0;
  for (char c : s) longest = std::max(longest, run = c == '`' ? run + 1 : 0);
  return longest;
}

// Markdown inline code that survives backticks in the text (a regex may
// hold them): a fence one backtick longer than the longest run inside.
std::string code(std::string_view s) {
  std::string fence(longest_backtick_run(s) + 1, '`');
  return fence + (s.empty() || s.front() == '`' || s.back() == '`' ? " " + std::string(s) + " " : std::string(s)) + fence;
}

void list(std::string& out, const char* title, const std::vector<std::string>& items, const char* none) {
  out += fmt::format("\n\n{}:", title);
  if (items.empty()) out += fmt::format(" {}", none);
  for (const auto& i : items) out += "\n- " + i;
}

std::vector<std::string> uses(const std::vector<CatalogIndex::Use>& us) {
  std::vector<std::string> out;
  for (const auto& u : us) out.push_back(fmt::format("{} — {}", u.what, link(u.where)));
  return out;
}

std::string fields(const ir::KindSchema& k) {
  std::vector<std::string> f;
  for (const auto& d : k.fields) f.push_back(fmt::format("{}: {}", d.name, type_name(d.type)));
  return f.empty() ? std::string("no fields of its own") : fmt::format("fields: {}", code(fmt::format("{}", fmt::join(f, ", "))));
}

// A kind's hover: its fields, who makes it, who reads it.
std::string kind_section(const char* what, const ir::KindSchema& k, const CatalogIndex::KindUses& u, const char* made_by,
                         const char* made_by_none) {
  std::string s = fmt::format("**{}** {}\n\n{}", what, code(k.name), fields(k));
  list(s, made_by, uses(u.made), made_by_none);
  list(s, "Read by", uses(u.read), "no rule");
  return s;
}

}  // namespace

CatalogIndex::CatalogIndex(std::shared_ptr<const ir::Catalog> catalog) : catalog_(std::move(catalog)) {
  const auto& c = *catalog_;
  events_.resize(c.event_kinds.size());
  symptoms_.resize(c.symptom_kinds.size());
  auto at = [](std::vector<KindUses>& v, int32_t k) -> KindUses* {
    return k >= 0 && static_cast<size_t>(k) < v.size() ? &v[static_cast<size_t>(k)] : nullptr;
  };
  for (const auto& x : c.extractors)
    if (auto* u = at(events_, x.kind)) u->made.push_back({fmt::format("extractor `{}`", x.name), x.where});
  for (const auto& r : c.rules) {
    for (const auto& a : r.actions) {
      if (a.kind == ir::ActionKind::Emit)
        if (auto* u = at(events_, a.kind_id)) u->made.push_back({fmt::format("rule `{}` (emit)", r.name), a.where});
      if (a.kind == ir::ActionKind::Symptom)
        if (auto* u = at(symptoms_, a.kind_id)) u->made.push_back({fmt::format("rule `{}`", r.name), a.where});
    }
    // A rule is listed once per kind it reads, however many of its queries do.
    for (int symptom = 0; symptom < 2; ++symptom) {
      auto& kinds = symptom ? symptoms_ : events_;
      for (size_t k = 0; k < kinds.size(); ++k) {
        bool sees = false;
        each_query(r, [&](const ir::Query& q) { sees = sees || reads(q, symptom, static_cast<int32_t>(k)); });
        if (sees) kinds[k].read.push_back({fmt::format("rule `{}`", r.name), r.where});
      }
    }
  }
}

std::string CatalogIndex::hover(std::string_view word) const {
  const auto& c = *catalog_;
  std::string out;
  auto section = [&](std::string text) { out += (out.empty() ? "" : "\n\n---\n\n") + text; };
  if (int32_t k = c.event_kind_id(word); k >= 0)
    section(kind_section("event kind", c.event_kinds[static_cast<size_t>(k)], events_[static_cast<size_t>(k)], "Emitted by",
                         "nothing in this catalog"));
  if (int32_t k = c.symptom_kind_id(word); k >= 0)
    section(kind_section("symptom kind", c.symptom_kinds[static_cast<size_t>(k)], symptoms_[static_cast<size_t>(k)],
                         "Created by", "no rule"));
  for (const auto& x : c.extractors) {
    if (x.name != word) continue;
    std::string kind = x.kind >= 0 && static_cast<size_t>(x.kind) < c.event_kinds.size() ? c.event_kinds[static_cast<size_t>(x.kind)].name : "?";
    std::string flags = std::string(x.caseless ? "i" : "") + (x.dotall ? "s" : "");
    // Several `match` clauses are one regex, the clauses as alternatives (compiler/regex_check.h).
    std::string regex = fmt::format("/{}/{}", x.pattern, flags);
    std::string fence(std::max<size_t>(3, longest_backtick_run(regex) + 1), '`');
    std::string s = fmt::format("**extractor** {} — {}\n\nemits {}\n\nfrom: {}\n\nmatch:\n{}\n{}\n{}", code(x.name),
                                link(x.where), code(kind), fmt::join(x.sources, ", "), fence, regex, fence);
    section(std::move(s));
  }
  return out;
}

std::vector<SourceRange> CatalogIndex::definition(std::string_view word) const {
  const auto& c = *catalog_;
  std::vector<SourceRange> out;
  if (int32_t k = c.event_kind_id(word); k >= 0)
    for (const auto& u : events_[static_cast<size_t>(k)].made) out.push_back(u.where);
  if (int32_t k = c.symptom_kind_id(word); k >= 0)
    for (const auto& u : symptoms_[static_cast<size_t>(k)].made) out.push_back(u.where);
  for (const auto& x : c.extractors)
    if (x.name == word) out.push_back(x.where);
  return out;
}

}  // namespace culprit::cli::lsp
