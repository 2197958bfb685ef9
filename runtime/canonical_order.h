// The orders the rule engine hands things out in, shared by the stage
// runner (runtime/engine.cpp), its event store, its query indexes and the
// outcome: times with the timed before the untimed, and symptoms by their
// first time, then by id. A query answered from an index and the same query
// answered by a scan must list candidates alike, and the root cause is the
// first symptom in this same order, so there is one definition of each.
// (Events' canonical order is event_canonical_less, runtime/engine.h.)
//
// Internal to the engine. Pure functions: any thread; nothing throws.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/model.h"

namespace culprit {

// Timed before untimed; two timed values by time.
inline bool time_less(const std::optional<int64_t>& a, const std::optional<int64_t>& b) {
  if (a.has_value() != b.has_value()) return a.has_value();  // timed before untimed
  return a && *a < *b;
}

// The order of symptom candidates: `first` (untimed last), then id.
inline bool symptom_order(const Symptom* a, const Symptom* b) {
  if (a->first != b->first) return time_less(a->first, b->first);
  return a->id < b->id;
}

}  // namespace culprit
