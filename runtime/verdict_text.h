// The verdict for people, sized for a terminal.
//
// Layout, top to bottom (the answer first, so it stays on screen):
//   1. the workload line;
//   2. the cause block: status, domain / sub_domain, the root cause's
//      summary, the culprit nodes, and each cause symptom with up to
//      `evidence_per_symptom` of its original log lines;
//   3. the cascade collapsed to one line per (kind, reason): how many
//      occurrences, on which nodes, and why they were demoted;
//   4. other active symptoms, other demoted ones and scrubbed ones, also
//      one line per kind;
//   5. coverage warnings;
//   6. what was read and with which catalog parts, then a one-line recap.
// `cascade` (or `explain`) lists every symptom with its evidence instead of
// collapsing, wrapped at the width and never cut; `explain` adds the
// derivation trail (which rule did what, where the rule is written, a rule's
// repeated action on one kind as one row "×N on nodes"), before the recap.
//
// Width: every line that quotes evidence or lists things is cut to `width`
// columns (display columns, counted in code points) with "…"; sentences
// (summaries, warnings) wrap instead. width 0 = no limit.
//
// Height: with `height` set (the terminal's rows), a report that would scroll
// the cause block off the screen is shortened, step by step, until it fits:
// one evidence line per cause, then none under other symptoms and no "lines
// read" line, then at most a few rows per section ("… N more rows"), then one
// line per section. The cause block and the recap are never shortened, so at
// 80×24 both the answer and what to do stay on screen. A report that still
// does not fit is printed at its shortest. `cascade` and `explain` are never
// shortened: they are asked for in full.
//
// The recap (last) repeats the answer and the action ("next: ..."), where the
// prompt returns.
//
// Deterministic like the JSON form: the same verdict and options give the
// same bytes. Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/model.h"

namespace culprit {

struct TextOptions {
  bool explain = false;   // the derivation trail; implies cascade
  bool cascade = false;   // every symptom with its evidence, not one line per (kind, reason)
  bool color = false;     // ANSI colours
  size_t width = 0;       // columns to fit; 0 = no limit
  size_t height = 0;      // lines to fit (not with cascade/explain); 0 = no limit
  size_t evidence_per_symptom = 3;
};

std::string verdict_to_text(const Verdict& v, const TextOptions& opt);

// "1 symptom", "2 symptoms"; `plural` defaults to `singular` + "s".
std::string count_of(int64_t n, const std::string& singular, const std::string& plural = "");

}  // namespace culprit
