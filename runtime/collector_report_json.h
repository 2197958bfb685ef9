// Collector reports as JSON: the objects of a verdict's
// coverage.collectors (docs/verdict.schema.json) and of the service's
// `collectors` request key (docs/service.md), one format for both.
//
// Thread-safety: pure functions. Reading is strict and never throws: a
// malformed report is false with the key at fault.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runtime/model.h"

namespace culprit {

nlohmann::ordered_json collector_report_to_json(const CollectorReport& r);
// Validates and converts one report; unknown keys, wrong types and an
// unknown status are errors naming the key. Absent keys keep their defaults.
bool collector_report_from_json(const nlohmann::json& j, CollectorReport& out, std::string& error);

}  // namespace culprit
