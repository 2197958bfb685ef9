#include "runtime/event_store.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <tuple>

#include "runtime/canonical_order.h"
#include "runtime/engine.h"

namespace culprit {

bool event_canonical_less(const Event& a, const Event& b) {
  if (a.where.ts != b.where.ts) return time_less(a.where.ts, b.where.ts);
  if (std::tie(a.host, a.where.source, a.where.file, a.where.line, a.producer, a.kind) !=
      std::tie(b.host, b.where.source, b.where.file, b.where.line, b.producer, b.kind))
    return std::tie(a.host, a.where.source, a.where.file, a.where.line, a.producer, a.kind) <
           std::tie(b.host, b.where.source, b.where.file, b.where.line, b.producer, b.kind);
  // Same place (e.g. metric samples of one instant, observations without a
  // line number): order by content so input order never matters.
  if (a.where.text != b.where.text) return a.where.text < b.where.text;
  return std::lexicographical_compare(a.fields.begin(), a.fields.end(), b.fields.begin(), b.fields.end(), value_less);
}


namespace {

// For every event kind, the index (in run order, i.e. catalog order) of the
// last rule with an event query over it: `for`, queries inside expressions,
// and action queries. -1 when no rule reads the kind.
std::vector<int64_t> last_event_readers(const ir::Catalog& cat) {
  std::vector<int64_t> last(cat.event_kinds.size(), -1);
  auto note = [&](const ir::Query& q, int64_t rule) {
    if (q.symptom) return;
    for (int32_t k : q.kinds)
      if (k >= 0 && static_cast<size_t>(k) < last.size()) last[static_cast<size_t>(k)] = std::max(last[static_cast<size_t>(k)], rule);
  };
  for (size_t i = 0; i < cat.rules.size(); ++i) {
    const auto& r = cat.rules[i];
    auto idx = static_cast<int64_t>(i);
    if (r.for_query) note(*r.for_query, idx);
    for (const auto& q : r.queries) note(q, idx);
    for (const auto& a : r.actions)
      if (a.query) note(*a.query, idx);
  }
  return last;
}

}  // namespace

EventStore::EventStore(const ir::Catalog& catalog)
    : storage_(catalog.event_kinds.size()), last_reader_(last_event_readers(catalog)), by_kind_(catalog.event_kinds.size()) {}

// The store keeps pointers, kind by kind, into the batches as they came.
// (Moving events into storage by kind cost a move per event and, since
// freed heap memory stays resident, a second copy of every shell at the
// peak.) What no rule reads is emptied before the sort, so it costs no
// sorting either.
size_t EventStore::take(std::vector<EventList> batches) {
  batches_ = std::move(batches);
  size_t received = 0;
  for (const auto& b : batches_) received += b.size();
  for (auto& b : batches_)
    for (auto& e : b)
      if (last_reader_[static_cast<size_t>(e.kind)] < 0) drop(e);  // no rule reads it
  sort_into_kinds();
  return received;
}

// Derived events join after the rule that made them, so a rule never sees
// its own output while it runs.
std::vector<int32_t> EventStore::add_derived(std::vector<Event>& pending, int64_t rule) {
  std::vector<int32_t> touched_kinds;
  if (pending.empty()) return touched_kinds;
  // Sorted by pointer (an Event is large to move), then moved once into
  // its kind's list in that order.
  std::vector<Event*> order;
  order.reserve(pending.size());
  std::map<int32_t, size_t> touched;  // kind -> derived events of it that a later rule reads
  for (auto& e : pending)
    if (last_reader_[static_cast<size_t>(e.kind)] > rule) {
      ++touched[e.kind];
      order.push_back(&e);
    }
  auto less = [](const Event* a, const Event* b) { return event_canonical_less(*a, *b); };
  std::stable_sort(order.begin(), order.end(), less);
  std::map<int32_t, size_t> old_size;  // kind -> its events before these
  for (const auto& [k, n] : touched) old_size[k] = by_kind_[static_cast<size_t>(k)].size();
  for (Event* e : order) {
    auto& list = storage_[static_cast<size_t>(e->kind)];
    list.push_back(std::move(*e));
    by_kind_[static_cast<size_t>(e->kind)].push_back(&list.back());
  }
  pending.clear();
  for (const auto& [k, n] : touched) {
    // Both parts are in canonical order: a stable merge is the stable sort.
    auto& list = by_kind_[static_cast<size_t>(k)];
    std::inplace_merge(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(old_size[k]), list.end(), less);
    touched_kinds.push_back(k);
  }
  return touched_kinds;
}

// Rules reach events only through queries, so a kind no later rule queries
// can never be seen again: its events go (and the caller drops their index
// entries).
std::vector<int32_t> EventStore::free_dead_kinds(int64_t rule) {
  std::vector<int32_t> freed;
  for (size_t k = 0; k < storage_.size(); ++k) {
    if (last_reader_[k] != rule) continue;
    // In address order: the list is in time order, which on many nodes
    // jumps across the heap at every step, and each drop touches the
    // event, its line and its fields (a cache and TLB miss each, out of
    // order). The scanner made them in address order.
    auto& dead = by_kind_[k];
    std::sort(dead.begin(), dead.end(), std::less<const Event*>());
    // The blocks an event owns (its fields, its line) lie elsewhere; ask
    // for them a few events ahead, as candidates() does for its filters.
    constexpr size_t kPrefetchShell = 12, kPrefetchOwned = 6;
    for (size_t i = 0; i < dead.size(); ++i) {
      if (i + kPrefetchShell < dead.size()) {
        const char* shell = reinterpret_cast<const char*>(dead[i + kPrefetchShell]);
        __builtin_prefetch(shell);
        __builtin_prefetch(shell + 64);
        __builtin_prefetch(shell + 128);
      }
      if (i + kPrefetchOwned < dead.size()) {
        const Event* ahead = dead[i + kPrefetchOwned];
        __builtin_prefetch(ahead->fields.data());
        __builtin_prefetch(ahead->where.text.data());
      }
      drop(*const_cast<Event*>(dead[i]));  // the store owns every event
    }
    storage_[k] = {};
    by_kind_[k] = {};
    freed.push_back(static_cast<int32_t>(k));
  }
  return freed;
}

void EventStore::clear() {
  by_kind_ = {};
  storage_ = {};
  batches_ = {};
}

// Frees what an event holds; kind -1 marks it as gone.
void EventStore::drop(Event& e) {
  e = Event();
  e.kind = -1;
}

// Puts every kind's events into by_kind_ in canonical order. Rules see
// events only kind by kind, so each kind is sorted on its own, and on a
// key that decides nearly every comparison with integers: (timed, ts,
// rank of (host, source, file), line); only events of one line (several
// extractors) fall through to the full comparison.
void EventStore::sort_into_kinds() {
  // Number the (host, source, file) triples; a batch's events share one,
  // so most events reuse the previous event's number.
  using Triple = std::tuple<std::string_view, std::string_view, std::string_view>;
  std::map<Triple, int32_t> ids;
  std::vector<std::vector<int32_t>> file_of(by_kind_.size());  // by kind, like by_kind_: the triple's number
  const Event* prev = nullptr;
  int32_t prev_id = -1;
  for (const auto& batch : batches_)
    for (const auto& e : batch) {
      if (e.kind < 0) continue;
      if (!prev || e.host != prev->host || e.where.source != prev->where.source || e.where.file != prev->where.file) {
        prev_id = ids.try_emplace(Triple(e.host, e.where.source, e.where.file), static_cast<int32_t>(ids.size())).first->second;
        prev = &e;
      }
      by_kind_[static_cast<size_t>(e.kind)].push_back(&e);
      file_of[static_cast<size_t>(e.kind)].push_back(prev_id);
    }
  std::vector<int32_t> rank(ids.size());
  int32_t next = 0;
  for (const auto& [triple, id] : ids) rank[static_cast<size_t>(id)] = next++;  // the map is in lexicographic order
  // One kind at a time, so the keys of only one kind exist at once. A
  // key is two words and the event: its time (sign bit flipped, so that
  // unsigned order is signed order) and its place, the file's rank in the
  // high bits and the line in the low ones. Untimed events sort after
  // all timed ones and are keyed apart, so no time value stands for
  // "none". A place is a monotone image of (file, line): a line or rank
  // too large for its bits is clamped, and events whose places tie are
  // ordered by event_canonical_less, which decides exactly.
  struct Key {
    uint64_t t;
    uint64_t place;
    const Event* e;
  };
  constexpr int kLineBits = 40;
  constexpr uint64_t kMaxLine = (uint64_t{1} << kLineBits) - 1;
  constexpr uint64_t kMaxRank = (uint64_t{1} << (64 - kLineBits)) - 1;
  auto place_of = [&](uint64_t file_rank, int64_t line) {
    if (file_rank >= kMaxRank) return (kMaxRank << kLineBits) | kMaxLine;  // all such places tie
    const uint64_t l = line < 0 ? 0 : std::min<uint64_t>(static_cast<uint64_t>(line), kMaxLine);
    return (file_rank << kLineBits) | l;
  };
  auto less = [](const Key& a, const Key& b) {
    if (a.t != b.t) return a.t < b.t;
    if (a.place != b.place) return a.place < b.place;
    return event_canonical_less(*a.e, *b.e);
  };
  std::vector<Key> keys, untimed;
  for (size_t k = 0; k < by_kind_.size(); ++k) {
    auto& list = by_kind_[k];
    keys.clear();
    untimed.clear();
    keys.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      const Event& e = *list[i];
      const uint64_t place = place_of(static_cast<uint64_t>(rank[static_cast<size_t>(file_of[k][i])]), e.where.line);
      if (e.where.ts) keys.push_back({static_cast<uint64_t>(*e.where.ts) ^ (uint64_t{1} << 63), place, &e});
      else untimed.push_back({0, place, &e});
    }
    file_of[k] = {};
    std::sort(keys.begin(), keys.end(), less);
    std::sort(untimed.begin(), untimed.end(), less);
    size_t at = 0;
    for (const Key& key : keys) list[at++] = key.e;
    for (const Key& key : untimed) list[at++] = key.e;
  }
}

// Each kind's list is in canonical order already: merging is enough.
std::vector<const Event*> EventStore::merged(const std::vector<int32_t>& kinds) const {
  std::vector<const Event*> out;
  auto less = [](const Event* a, const Event* b) { return event_canonical_less(*a, *b); };
  for (int32_t k : kinds) {
    const auto& list = by_kind_[static_cast<size_t>(k)];
    size_t mid = out.size();
    out.insert(out.end(), list.begin(), list.end());
    if (mid > 0) std::inplace_merge(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(mid), out.end(), less);
  }
  return out;
}

}  // namespace culprit
