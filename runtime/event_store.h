// The events of one rule-engine run, kind by kind, in canonical order.
//
// The stage runner (runtime/engine.cpp) hands it the scanner's batches and,
// after each rule, the events that rule derived; queries read a kind's
// events through it (of_kind, merged), in canonical order
// (event_canonical_less, runtime/engine.h). Events stay where the scanner
// put them: the store keeps pointers into the batches, kind by kind, and
// keeps derived events in lists that never move an element once added. The
// events of a kind that no rule reads, or no later rule, are emptied in
// place as soon as that is so: their strings and fields go, their
// fixed-size shells stay until clear().
//
// Ownership: the store owns the batches and the derived events. A pointer
// it hands out stays valid until its kind is freed (free_dead_kinds) or
// clear(). Thread-safety: none; a store belongs to one run on one thread.
// Errors: nothing throws but allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compiler/ir.h"
#include "runtime/model.h"

namespace culprit {

class EventStore {
 public:
  explicit EventStore(const ir::Catalog& catalog);

  // Takes the scanned batches, in any order: events of kinds no rule reads
  // are emptied at once, the others sorted into their kinds. Returns how
  // many events were received, read or not (the step budget is sized on it).
  size_t take(std::vector<EventList> batches);

  // The events of one kind, in canonical order.
  const std::vector<const Event*>& of_kind(int32_t kind) const { return by_kind_[static_cast<size_t>(kind)]; }
  // The events of `kinds`, merged into canonical order.
  std::vector<const Event*> merged(const std::vector<int32_t>& kinds) const;

  // Adds the events that rule `rule` (its index in run order) derived,
  // taking them from `pending` and leaving it empty; events of kinds no
  // later rule reads are discarded. Returns the kinds that gained events,
  // in ascending order.
  std::vector<int32_t> add_derived(std::vector<Event>& pending, int64_t rule);

  // Frees the events of every kind that rule `rule` was the last to read
  // (call it once that rule has run). Returns those kinds, ascending.
  std::vector<int32_t> free_dead_kinds(int64_t rule);

  // Frees every event.
  void clear();

 private:
  void sort_into_kinds();
  static void drop(Event& e);

  std::vector<EventList> batches_;   // the events as scanned
  std::vector<EventList> storage_;   // by kind: derived events (they never move once added)
  std::vector<int64_t> last_reader_; // by kind: index of the last rule that queries it, -1 for none
  std::vector<std::vector<const Event*>> by_kind_;  // canonical order
};

}  // namespace culprit
