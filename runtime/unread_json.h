// What a carrier could not read, as JSON: the `unread` object that travels
// with evidence sent to the service (`culprit diagnose --server`, `culprit
// run` with attribution.service; docs/service.md), so that the service's
// verdict lists the same ignored and refused files and carrier warnings as
// local mode does.
//
//   {"ignored_files": ["notes.txt"],
//    "refused_files": [{"path": "logs/n1/app.log", "reason": "a FIFO"}],
//    "warnings": ["logs/n2: cannot list: Permission denied"]}
//
// Every key is optional. Reading is strict (unknown keys and wrong types are
// errors naming the key) and bounded: at most limits::kUnreadEntries entries
// in all, each string at most limits::kUnreadEntryBytes bytes.
//
// Thread-safety: pure functions; nothing throws.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runtime/evidence_set.h"

namespace culprit {

// Null when the evidence has nothing unread (the key is then left out).
nlohmann::ordered_json unread_to_json(const EvidenceSet& e);
// Fills e.ignored_files, e.refused_files and e.warnings (appending).
bool unread_from_json(const nlohmann::json& j, EvidenceSet& e, std::string& error);

}  // namespace culprit
