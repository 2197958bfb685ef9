// The verdict for people: root cause first, culprit nodes, the cascade
// collapsed under it, coverage warnings; with `explain`, the derivation trail
// (which rule did what, and why). Deterministic like the JSON form.
#pragma once

#include <string>

#include "runtime/model.h"

namespace culprit {

struct TextOptions {
  bool explain = false;
  bool color = false;
  size_t evidence_per_symptom = 3;
};

std::string verdict_to_text(const Verdict& v, const TextOptions& opt);

}  // namespace culprit
