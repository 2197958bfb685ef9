// What a request will hold, estimated before it is held, and the
// reservations that charge it to the service's memory budget.
//
// Every body byte, observation, context and event a request or a session
// holds is charged to one MemoryBudget (service/session_store.h) before it
// is kept; a request that does not fit gets 429 (the service is full) or
// 413 (this workload is too large). The estimates here let a request be
// admitted or refused as a whole, before it is parsed: charging only as it
// parses lets many concurrent requests each take part of the budget and all
// fail half way.
//
// Ownership: a Reservation holds bytes of the budget it names and returns
// them when it goes out of scope; the budget must outlive it.
// Thread-safety: the functions are pure; a Reservation belongs to one
// request's thread (the budget itself is thread-safe). No exceptions.
#pragma once

#include <algorithm>
#include <cstddef>

#include "runtime/diagnose.h"
#include "runtime/model.h"
#include "service/http.h"
#include "service/session_store.h"

namespace culprit::service {

// What a request or a session holds for its context, in bytes.
size_t context_cost(const WorkloadContext& c, size_t json_bytes);

// What a request holds for its collector reports and its `unread` (kept
// into the verdict).
size_t carried_cost(const EvidenceSet& e);

// What parsing a body will hold at its peak, estimated from the body before
// it is parsed. NDJSON: one observation per line; JSON: the document tree
// too (an object per observation, a few members each), as long as it lives.
// Compressed bodies cannot be counted: 0 (they are charged as they parse).
size_t estimate_parse_cost(const RequestBody& body, bool ndjson);

// What the events of one attribution can hold: each line that matches an
// extractor becomes an event (its record, fields and provenance, about 1 KiB,
// and its text up to limits::kEvidenceText), and an attribution keeps at most
// limits::kEventsPerRequest of them (DiagnoseOptions::max_events), so this
// is known before the scan and charged with the observations.
size_t event_allowance(size_t observations, size_t text_bytes);

// A reservation on the shared budget, returned when it goes out of scope.
struct Reservation {
  MemoryBudget& budget;
  size_t bytes = 0;
  ~Reservation() { budget.release(bytes); }
  // Holds at least `total` bytes, growing by at least `step` at a time, so
  // that a stream of small observations reserves once per step, not once
  // each. False when the budget cannot give them.
  bool grow_to(size_t total, size_t step = 1u << 20) {
    if (total <= bytes) return true;
    size_t more = std::max(total - bytes, step);
    if (!budget.reserve(more)) return false;
    bytes += more;
    return true;
  }
};

}  // namespace culprit::service
