// Scanner::Window: one buffer of whole lines -> Scanner::Prepared. The
// source's Hyperscan database runs over the buffer, the hits of each line go
// through the filter (FilteredRE2, with the per-source plan that caches what
// a line's atoms may match), and the extractors it names take their captures
// and compute their fields.
//
// Separate from the rest of the scan because this is the part that depends
// only on the buffer: any thread may run it (ScanHelpers, runtime/scanner.cpp),
// while what depends on earlier lines is applied in order by Scanner::Stream
// (runtime/scanner_stream.cpp).

#include "runtime/scanner_internal.h"

#include <hs/hs.h>
#include <re2/filtered_re2.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "base/text_util.h"

namespace culprit {

namespace {

using scanner_internal::line_time;
using scanner_internal::MatchCollector;

// Hyperscan reports every end offset of every match; a `.*` tail reports one
// per byte. Only the first per line matters, so repeats of an id with no
// newline since its last report are dropped here.
int on_match(unsigned int id, unsigned long long /*from*/, unsigned long long to, unsigned int, void* ctx) {
  auto* c = static_cast<MatchCollector*>(ctx);
  unsigned long long& last = c->last_end[id];
  if (last != ~0ULL && to >= last && std::memchr(c->base + last, '\n', to - last) == nullptr) return 0;
  last = to;
  c->hits.emplace_back(to, id);
  return 0;
}

}  // namespace

Scanner::Window::Window(Scanner& scanner, const std::string& source, const ScanOptions& opt)
    : scanner_(scanner), program_(*scanner.program_), opt_(opt), db_(program_.database_for(source)) {
  if (!db_) return;
  plan_ = &scanner.plan_for(*db_);
  // One slot per Hyperscan id: the atoms, then the unfiltered extractors.
  collector_.last_end.assign(static_cast<size_t>(db_->atom_count) + db_->unfiltered.size(), ~0ULL);
}

// `data` holds whole lines separated by '\n' (the last may lack it).
//
// The work after Hyperscan is proportional to the hits, not the bytes,
// except for one vectorized pass that counts newlines and spots non-ASCII
// bytes. Hits are grouped by line with a forward search to the line's end;
// the atoms of a line turn into extractors (mostly from the plan's
// per-atom cache), and only a line with extractors is located exactly: its
// start and its number (newlines are counted from the previous such line).
void Scanner::Window::prepare(const char* data, size_t len, Prepared& out) {
  out.clear();
  if (len == 0) return;
  collector_.hits.clear();
  if (db_) {
    collector_.base = data;
    std::fill(collector_.last_end.begin(), collector_.last_end.end(), ~0ULL);
    hs_scan(db_->db, data, static_cast<unsigned>(len), 0, scanner_.scratch_, on_match, &collector_);
    // Hyperscan reports in end-offset order nearly always; sort only when it did not.
    auto by_end = [](const auto& a, const auto& b) { return a.first < b.first; };
    if (!std::is_sorted(collector_.hits.begin(), collector_.hits.end(), by_end))
      std::stable_sort(collector_.hits.begin(), collector_.hits.end(), by_end);
  }
  bool non_ascii = false;
  size_t counted = 0;  // newlines counted up to here
  int64_t newlines = 0;
  const auto& hits = collector_.hits;
  for (size_t h = 0; h < hits.size();) {
    size_t p = std::min<size_t>(hits[h].first - 1, len - 1);
    // The line holding byte p: a hit on the '\n' itself belongs to the line it ends.
    const char* nl = static_cast<const char*>(std::memchr(data + p, '\n', len - p));
    size_t end = nl ? static_cast<size_t>(nl - data) : len;
    size_t first_hit = h;
    while (h < hits.size() && hits[h].first - 1 <= end) ++h;
    candidates(first_hit, h, ids_);
    if (ids_.empty()) continue;
    const void* prev = p > 0 ? memrchr(data, '\n', p) : nullptr;
    size_t start = prev ? static_cast<size_t>(static_cast<const char*>(prev) - data) + 1 : 0;
    newlines += static_cast<int64_t>(count_newlines(std::string_view(data + counted, start - counted), &non_ascii));
    counted = start;
    Prepared::Line line;
    line.start = start;
    line.end = end;
    line.newlines_before = newlines;
    std::string_view text(data + start, end - start);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.size() > opt_.max_line) {
      line.truncated = true;
      text = text.substr(0, opt_.max_line);
    }
    line.lt = line_time(text, opt_);
    line.first_event = out.events.size();
    extract_all(text, ids_, out.events, out.extractors);
    line.events = out.events.size() - line.first_event;
    out.lines.push_back(line);
  }
  out.newlines = newlines + static_cast<int64_t>(count_newlines(std::string_view(data + counted, len - counted), &non_ascii));
  // A pure-ASCII buffer (the usual case) needs no per-line UTF-8 check.
  if (non_ascii) out.invalid_utf8 = count_invalid_utf8(data, len);
}

// The extractors that may match a line held in memory on its own.
void Scanner::Window::single_candidates(std::string_view text, std::vector<int32_t>& ids) {
  ids.clear();
  if (!db_) return;
  collector_.hits.clear();
  collector_.base = text.data();
  std::fill(collector_.last_end.begin(), collector_.last_end.end(), ~0ULL);
  hs_scan(db_->db, text.data(), static_cast<unsigned>(text.size()), 0, scanner_.scratch_, on_match, &collector_);
  candidates(0, collector_.hits.size(), ids);
}

// Runs each extractor of `ids` on `text` (its own '\r' and length cut
// already) and appends the events they emit, once per extractor, in id
// order (a line can be flagged for one extractor more than once), each
// with its evidence text (printable, valid UTF-8 whatever the log held);
// `from` gets each event's extractor.
void Scanner::Window::extract_all(std::string_view text, const std::vector<int32_t>& ids, std::vector<Event>& out,
                                  std::vector<int32_t>& from) {
  std::vector<int32_t>& unique_ids = unique_ids_;
  unique_ids.assign(ids.begin(), ids.end());
  std::sort(unique_ids.begin(), unique_ids.end());
  unique_ids.erase(std::unique(unique_ids.begin(), unique_ids.end()), unique_ids.end());
  // The evidence text is made once per line and shared by its events; a
  // clean line (nearly all) is copied straight from the read window.
  SharedString line;
  for (int32_t x : unique_ids) {
    Event ev;
    if (!extract(x, text, ev)) continue;
    if (line.empty() && !text.empty()) {
      if (is_clean_text(text)) {
        line = text.size() > opt_.max_text ? SharedString(truncate_utf8(text, opt_.max_text)) : SharedString(text);
      } else {
        std::string fixed = sanitize_utf8(text);
        line = fixed.size() > opt_.max_text ? SharedString(truncate_utf8(fixed, opt_.max_text)) : SharedString(fixed);
      }
    }
    ev.where.text = line;
    out.push_back(std::move(ev));
    from.push_back(x);
  }
}

int64_t Scanner::Window::count_invalid_utf8(const char* data, size_t len) const {
  int64_t n = 0;
  for (size_t pos = 0; pos < len;) {
    const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', len - pos));
    size_t e = nl ? static_cast<size_t>(nl - data) : len;
    std::string_view line(data + pos, e - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!is_valid_utf8(line.substr(0, std::min(line.size(), opt_.max_line)))) ++n;
    pos = e + 1;
  }
  return n;
}

// Hyperscan hits [first, last) of one line -> the extractors that may match
// it: atom hits go through FilteredRE2 (with the atoms not scanned for
// taken as present), unfiltered extractors hit directly. A line with a single distinct atom
// (most hit lines) is answered from the plan's per-atom cache, because
// FilteredRE2 allocates on every call.
void Scanner::Window::candidates(size_t first, size_t last, std::vector<int32_t>& ids) {
  ids.clear();
  atoms_.clear();
  for (size_t k = first; k < last; ++k) {
    auto id = static_cast<int32_t>(collector_.hits[k].second);
    if (id < db_->atom_count) atoms_.push_back(db_->atom_index[static_cast<size_t>(id)]);
    else ids.push_back(db_->extractors[static_cast<size_t>(db_->unfiltered[static_cast<size_t>(id - db_->atom_count)])]);
  }
  if (!atoms_.empty()) {
    std::sort(atoms_.begin(), atoms_.end());
    atoms_.erase(std::unique(atoms_.begin(), atoms_.end()), atoms_.end());
    if (atoms_.size() == 1) {
      const auto& solo = scanner_.solo_potentials(*plan_, atoms_[0]);
      if (ids.empty()) {
        ids = solo;  // already sorted and unique
        return;
      }
      ids.insert(ids.end(), solo.begin(), solo.end());
    } else {
      scanner_.multi_potentials(*plan_, atoms_, ids);
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

bool Scanner::Window::extract(int32_t x, std::string_view text, Event& ev) {
  const auto& cat = program_.catalog();
  const auto& ex = cat.extractors[static_cast<size_t>(x)];
  const CaptureRegex& re = program_.extractor_capture(x);
  const int n = re.groups();
  groups_.assign(static_cast<size_t>(n) + 1, re2::StringPiece());
  scanner_.capture_scratch_.verify = opt_.verify_captures;
  if (!re.match(text, scanner_.capture_scratch_, groups_.data(), n + 1)) return false;
  captures_.assign(static_cast<size_t>(n), std::nullopt);
  for (int i = 0; i < n; ++i)
    if (groups_[static_cast<size_t>(i) + 1].data() != nullptr)
      captures_[static_cast<size_t>(i)] = std::string_view(groups_[static_cast<size_t>(i) + 1].data(), groups_[static_cast<size_t>(i) + 1].size());
  ev.kind = ex.kind;
  ev.producer = ex.name;
  ev.fields.assign(cat.event_kinds[static_cast<size_t>(ex.kind)].fields.size(), Value::null());
  Env& env = field_env_;  // kept across events: its slots need not be allocated for each
  if (!env.catalog) {
    env.catalog = &cat;
    env.regexes = &program_.expression_regexes();
    env.captures = &captures_;
    env.native = program_.native();
    env.slots.resize(1);
  }
  for (const auto& f : ex.fields) {
    Value v = run_expression(f.value, env);
    if (v.type == Type::String && !is_valid_utf8(v.s)) v.s = sanitize_utf8(v.s);
    ev.fields[static_cast<size_t>(f.slot)] = std::move(v);
  }
  return true;
}

Scanner::SourcePlan& Scanner::plan_for(const Program::SourceDatabase& db) {
  for (auto& p : plans_)
    if (p->db == &db) return *p;
  auto plan = std::make_unique<SourcePlan>();
  plan->db = &db;
  plan->solo.resize(db.atoms.size());
  plans_.push_back(std::move(plan));
  return *plans_.back();
}

void Scanner::potentials(SourcePlan& plan, const std::vector<int>& atoms, std::vector<int32_t>& ids) {
  const auto& db = *plan.db;
  query_.clear();
  std::merge(atoms.begin(), atoms.end(), db.implied_atoms.begin(), db.implied_atoms.end(), std::back_inserter(query_));
  db.filter->AllPotentials(query_, &found_);
  for (int local : found_) {
    // Unfiltered extractors always "pass" the filter; they count only on their own hits.
    if (std::binary_search(db.unfiltered.begin(), db.unfiltered.end(), local)) continue;
    ids.push_back(db.extractors[static_cast<size_t>(local)]);
  }
}

const std::vector<int32_t>& Scanner::solo_potentials(SourcePlan& plan, int atom) {
  auto& entry = plan.solo[static_cast<size_t>(atom)];
  if (!entry) {
    std::vector<int32_t> ids;
    potentials(plan, {atom}, ids);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    entry = std::move(ids);
  }
  return *entry;
}

void Scanner::multi_potentials(SourcePlan& plan, const std::vector<int>& atoms, std::vector<int32_t>& ids) {
  multi_key_.assign(reinterpret_cast<const char*>(atoms.data()), atoms.size() * sizeof(int));
  auto it = plan.multi.find(multi_key_);
  if (it == plan.multi.end()) {
    std::vector<int32_t> found;
    potentials(plan, atoms, found);
    if (plan.multi.size() >= SourcePlan::kMaxMulti) {
      ids.insert(ids.end(), found.begin(), found.end());
      return;
    }
    it = plan.multi.emplace(multi_key_, std::move(found)).first;
  }
  ids.insert(ids.end(), it->second.begin(), it->second.end());
}

}  // namespace culprit
